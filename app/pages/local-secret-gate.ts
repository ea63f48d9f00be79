import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { PageGate } from './page-gate.js';

/**
 * The local UI's gate, as Jupyter's: the one-time secret printed with the URL
 * (`?token=…`, which the pages pass on to every link and request they make) opens every
 * page; without it, 403. Another user of the machine can reach 127.0.0.1 too, which is
 * why the secret is needed.
 */
export function localSecretGate(secret: string): PageGate {
  const expected = Buffer.from(secret);
  const matches = (given: string | undefined): boolean =>
    given !== undefined && given.length === secret.length && timingSafeEqual(Buffer.from(given), expected);
  return {
    async admit(request: FastifyRequest) {
      const query = request.query as Record<string, string | undefined>;
      return matches(query.token) ? 'allowed' : 'forbidden';
    },
  };
}

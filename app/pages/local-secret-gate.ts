import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { PageGate } from './page-gate.js';

/**
 * The local UI's gate, as Jupyter's: the one-time secret printed with the URL
 * (`?token=…`, which the pages pass on to every link and request they make) opens every
 * page; without it, 403 (for a run that does not exist too). Another user of the machine can reach 127.0.0.1 too, which is
 * why the secret is needed.
 */
export function localSecretGate(secret: string): PageGate {
  // Digests are compared, in constant time and always of one length: a token of any length
  // or alphabet is a plain 403, never a 500 nor a hint from the time taken.
  const digest = (text: string) => createHash('sha256').update(text).digest();
  const expected = digest(secret);
  const matches = (given: unknown): boolean =>
    typeof given === 'string' && timingSafeEqual(digest(given), expected);
  return {
    async admit(request: FastifyRequest, repository: string | null) {
      const query = request.query as Record<string, unknown>;
      if (!matches(query.token)) return 'forbidden';
      return repository === null ? 'hidden' : 'allowed';
    },
  };
}

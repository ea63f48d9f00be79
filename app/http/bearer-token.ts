import type { FastifyRequest } from 'fastify';
import { HttpError } from './http-error.js';

/** The token of an `Authorization: Bearer <token>` header; 401 naming the header when there is none. */
export function bearerToken(request: FastifyRequest, what: string): string {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match?.[1]) {
    throw new HttpError(401, `Authorization: expected "Bearer <${what}>"`, 'Authorization');
  }
  return match[1];
}

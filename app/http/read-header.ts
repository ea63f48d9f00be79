import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { HttpError } from './http-error.js';

/**
 * A request header validated by `schema`; 400 naming the header (as callers write it,
 * e.g. `X-Fluksio-Lease`) when it is missing or malformed. `what` says what it should hold.
 */
export function readHeader<Schema extends z.ZodType>(
  request: FastifyRequest,
  name: string,
  schema: Schema,
  what: string,
): z.output<Schema> {
  const raw = request.headers[name.toLowerCase()];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || value === '') throw new HttpError(400, `${name}: is required (${what})`, name);
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new HttpError(
      400,
      `${name}: ${parsed.error.issues.map((issue) => issue.message).join('; ')} (${what})`,
      name,
    );
  }
  return parsed.data;
}

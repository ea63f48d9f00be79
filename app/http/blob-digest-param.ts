import type { FastifyRequest } from 'fastify';
import { BlobDigest } from '../../schemas/blob-digest.js';
import { HttpError } from './http-error.js';

/** The `:digest` of a blob route; 400 naming it when it is not `sha256:<64 hex>`. */
export function blobDigestParam(request: FastifyRequest): BlobDigest {
  const { digest } = request.params as { digest: string };
  const parsed = BlobDigest.safeParse(digest);
  if (parsed.success) return parsed.data;
  throw new HttpError(
    400,
    `digest: "${digest}" is not a blob digest; expected sha256:<64 hex digits>`,
    'digest',
  );
}

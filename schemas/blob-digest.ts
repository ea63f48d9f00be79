import { z } from 'zod';

/** A blob's name in the content-addressed store: `sha256:` and 64 lowercase hex digits. */
export const BlobDigest = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/, { error: 'expected a blob digest like "sha256:<64 hex digits>"' });
export type BlobDigest = z.infer<typeof BlobDigest>;

/** The blob digest of bytes whose hex sha256 is known. */
export function blobDigest(hex: string): BlobDigest {
  return `sha256:${hex}`;
}

import { z } from 'zod';
import { BlobDigest } from '../blob-digest.js';

/** `PUT /api/v1/blobs/:digest` → 201 with the blob's digest and its size in bytes, once its bytes were verified and stored. */
export const BlobUploadReply = z.object({ digest: BlobDigest, size: z.number().int().nonnegative() });
export type BlobUploadReply = z.infer<typeof BlobUploadReply>;

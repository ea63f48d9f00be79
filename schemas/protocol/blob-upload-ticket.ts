import { z } from 'zod';

/** `POST /api/v1/blobs/:digest/uploads`: a runner is about to upload a blob of `size` bytes. */
export const BlobUploadStart = z.object({ size: z.number().int().nonnegative() });
export type BlobUploadStart = z.infer<typeof BlobUploadStart>;

/**
 * Its answer: PUT the bytes to the control plane's own blob route (a directory store), or
 * straight to `url` with exactly `headers` (S3: a presigned URL, valid until `expiresAt`),
 * then finish with `POST /api/v1/blobs/:digest/uploads/:uploadId`.
 */
export const BlobUploadTicket = z.discriminatedUnion('via', [
  z.object({ via: z.literal('control-plane') }),
  z.object({
    via: z.literal('url'),
    uploadId: z.uuid(),
    url: z.url({ protocol: /^https?$/ }),
    headers: z.record(z.string(), z.string()),
    expiresAt: z.iso.datetime(),
  }),
]);
export type BlobUploadTicket = z.infer<typeof BlobUploadTicket>;

/** `POST /api/v1/blobs/:digest/uploads/:uploadId`: the bytes were PUT to the ticket's URL. */
export const BlobUploadFinish = z.object({ size: z.number().int().nonnegative() });
export type BlobUploadFinish = z.infer<typeof BlobUploadFinish>;

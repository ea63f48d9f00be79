import type { BlobUploadTicket } from '../schemas/protocol/blob-upload-ticket.js';
import { ControlPlaneError } from './control-plane-errors.js';
import type { CallOptions, ControlPlaneHttp, StoreRequest } from './control-plane-http.js';

/**
 * PUTs a blob's bytes to the presigned URL of `first`, retried under the client's policy.
 * Every retry asks the control plane for a new URL first (`askTicket`): the last one may
 * have expired while the retry waited (the store's 403), and would be refused however
 * often it was tried. Resolves with the id of the upload that went through, to finish it.
 */
export async function uploadToPresignedUrl({
  http,
  first,
  askTicket,
  body,
  call,
  timeoutMs,
}: {
  http: ControlPlaneHttp;
  first: Extract<BlobUploadTicket, { via: 'url' }>;
  askTicket: () => Promise<BlobUploadTicket>;
  /** The bytes, afresh for each attempt (a file is opened again). */
  body: () => NonNullable<StoreRequest['body']>;
  call: CallOptions;
  timeoutMs: number;
}): Promise<string> {
  let next: BlobUploadTicket | null = first;
  return http.withRetries('PUT (presigned upload URL)', call, async (signal) => {
    const ticket = next ?? (await askTicket());
    next = null;
    if (ticket.via !== 'url')
      throw new ControlPlaneError(
        0,
        'POST uploads',
        'The control plane stopped issuing upload URLs mid-upload; try again',
      );
    await http.storeAttempt('PUT', ticket.url, { headers: ticket.headers, body: body(), signal, timeoutMs });
    return ticket.uploadId;
  });
}

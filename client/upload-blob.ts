import type { BlobDigest } from '../schemas/blob-digest.js';
import { BlobUploadReply } from '../schemas/protocol/blob-upload-reply.js';
import {
  BlobUploadTicket,
  type BlobUploadFinish,
  type BlobUploadStart,
} from '../schemas/protocol/blob-upload-ticket.js';
import { blobPath } from './api-paths.js';
import { bodyOf, type BlobBody } from './blob-body.js';
import type { CallOptions, ControlPlaneHttp } from './control-plane-http.js';
import type { RunLease } from './run-lease.js';
import { uploadToPresignedUrl } from './upload-to-presigned-url.js';

/** What uploadBlob needs: the client's HTTP layer, the run, and the blob. */
export interface UploadBlobOptions {
  http: ControlPlaneHttp;
  run: RunLease;
  /** The digest of `body`'s bytes, hashed before the upload. */
  digest: BlobDigest;
  body: BlobBody;
  call: CallOptions;
  /** One transfer's time limit (ControlPlaneClientOptions.transferTimeoutMs). */
  timeoutMs: number;
}

/**
 * Uploads a blob of the run (ControlPlaneClient.putBlob) where the control plane's ticket
 * says: to the control plane itself, or to its store's presigned URL, then finished there.
 */
export async function uploadBlob(options: UploadBlobOptions): Promise<BlobUploadReply> {
  const { http, run, digest, body, call, timeoutMs } = options;
  const size = 'bytes' in body ? body.bytes.byteLength : body.size;
  const uploads = `${blobPath(digest)}/uploads`;
  const start: BlobUploadStart = { size };
  const askTicket = async (): Promise<BlobUploadTicket> =>
    http.parse(
      await http.send('POST', uploads, { call, json: start, lease: run }),
      BlobUploadTicket,
      `POST ${uploads}`,
    );
  const ticket = await askTicket();
  if (ticket.via === 'control-plane') return putThroughControlPlane(options);
  const uploadId = await uploadToPresignedUrl({
    http,
    first: ticket,
    askTicket,
    body: () => bodyOf(body),
    call,
    timeoutMs,
  });
  const finish: BlobUploadFinish = { size };
  const path = `${uploads}/${uploadId}`;
  // A transfer's time: a store that keeps no checksum has the control plane read the
  // upload back and hash it before answering (S3BlobStorage.finishUpload).
  return http.parse(
    await http.send('POST', path, {
      call,
      json: finish,
      lease: run,
      timeoutMs,
    }),
    BlobUploadReply,
    `POST ${path}`,
  );
}

/** PUTs the blob's bytes to the control plane, which verifies the digest as they arrive. */
async function putThroughControlPlane({
  http,
  run,
  digest,
  body,
  call,
  timeoutMs,
}: UploadBlobOptions): Promise<BlobUploadReply> {
  const request = `PUT ${blobPath(digest)}`;
  const response = await http.withRetries(request, call, (signal) =>
    http.attempt('PUT', blobPath(digest), {
      lease: run,
      signal,
      timeoutMs,
      body: bodyOf(body),
    }),
  );
  return http.parse(response, BlobUploadReply, request);
}

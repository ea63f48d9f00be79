import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import {
  BlobUploadFinish,
  BlobUploadStart,
  type BlobUploadTicket,
} from '../../schemas/protocol/blob-upload-ticket.js';
import type { BlobUploadReply } from '../../schemas/protocol/blob-upload-reply.js';
import { LeaseId } from '../../schemas/protocol/lease-id.js';
import type { Run } from '../../schemas/tables/runs.js';
import { addBlobRef } from '../../store/blobs/add-blob-ref.js';
import { hasBlobRef } from '../../store/blobs/has-blob-ref.js';
import { recordBlobUpload } from '../../store/blobs/record-blob-upload.js';
import { BlobTooLargeError, BlobUploadRejectedError } from '../blobs/blob-upload-errors.js';
import { authenticateRunner } from '../http/authenticate-runner.js';
import { blobDigestParam } from '../http/blob-digest-param.js';
import { holdLease } from '../http/hold-lease.js';
import { HttpError } from '../http/http-error.js';
import { parseInput } from '../http/parse-input.js';
import { readHeader } from '../http/read-header.js';
import { requestAuth } from '../http/request-auth.js';
import { RunIdHeader } from '../http/run-id-params.js';
import type { RouteContext } from '../route-context.js';
import { LEASE_WHAT, RUN_WHAT, tooLarge } from './blob-routes.js';

const UploadParams = z.object({
  digest: z.string(),
  uploadId: z.uuid({ error: 'expected an upload id (a UUID)' }),
});

/**
 * A runner's upload of one of its run's blobs, in two steps that work with any store:
 * `POST /api/v1/blobs/:digest/uploads` `{size}` answers where to PUT the bytes (the
 * control plane's own `PUT /api/v1/blobs/:digest`, or a presigned URL of the store), and
 * with a URL, `POST /api/v1/blobs/:digest/uploads/:uploadId` `{size}` once they are there:
 * the store's object is checked (size; the SHA-256 where the store keeps it) and only then
 * recorded for the run's repository. Both need the runner's token and the run's current
 * lease, as every upload does.
 */
export function blobUploadRoutes(app: FastifyInstance, context: RouteContext): void {
  const auth = requestAuth((request) =>
    authenticateRunner(context.db, request, context.settings.onlineWindowMs),
  );

  app.post('/api/v1/blobs/:digest/uploads', { onRequest: auth.onRequest }, async (request, reply) => {
    const { run, digest } = await leasedUpload(request);
    const { size } = parseInput(BlobUploadStart, request.body, 'body');
    if (size > context.settings.maxBlobBytes)
      throw tooLarge(new BlobTooLargeError(context.settings.maxBlobBytes));
    const { transfers } = context.blobs;
    if (transfers.via === 'control-plane')
      return reply.send({ via: 'control-plane' } satisfies BlobUploadTicket);
    const upload = await transfers.startUpload({ digest, size, runId: run.id });
    request.log.info({ runId: run.id, digest, size, uploadId: upload.uploadId }, 'blob upload URL issued');
    return reply.code(201).send({
      via: 'url',
      uploadId: upload.uploadId,
      url: upload.url,
      headers: upload.headers,
      expiresAt: upload.expiresAt.toISOString(),
    } satisfies BlobUploadTicket);
  });

  app.post(
    '/api/v1/blobs/:digest/uploads/:uploadId',
    { onRequest: auth.onRequest },
    async (request, reply) => {
      const { run, digest } = await leasedUpload(request);
      const { uploadId } = parseInput(UploadParams, request.params, 'uploadId');
      const { size } = parseInput(BlobUploadFinish, request.body, 'body');
      const { transfers } = context.blobs;
      if (transfers.via === 'control-plane') {
        throw new HttpError(
          404,
          `uploadId: this control plane issues no upload URLs; PUT /api/v1/blobs/${digest}`,
          'uploadId',
        );
      }
      if (size > context.settings.maxBlobBytes)
        throw tooLarge(new BlobTooLargeError(context.settings.maxBlobBytes));
      // Before the upload is moved under its digest: see blobRoutes' PUT.
      await recordBlobUpload({ db: context.db, digest, runId: run.id });
      try {
        await transfers.finishUpload({ digest, size, runId: run.id, uploadId });
      } catch (error) {
        if (!(error instanceof BlobUploadRejectedError)) throw error;
        // A finish retried after its answer was lost finds its upload moved already: the
        // repository holds the blob, so it is answered as the first one was.
        const retried =
          error.reason === 'absent' &&
          (await hasBlobRef({ db: context.db, repository: run.repository, digest })) &&
          (await context.blobs.size(digest)) === size;
        if (!retried) throw new HttpError(400, error.message, 'uploadId');
      }
      await addBlobRef({ db: context.db, repository: run.repository, digest, size, runId: run.id });
      request.log.info({ runId: run.id, digest, size, uploadId }, 'blob stored');
      return reply.code(201).send({ digest, size } satisfies BlobUploadReply);
    },
  );

  /** The run (held under the request's lease, and running) and the digest an upload is for. */
  async function leasedUpload(
    request: FastifyRequest,
  ): Promise<{ run: Run; digest: ReturnType<typeof blobDigestParam> }> {
    const runner = auth.of(request);
    const digest = blobDigestParam(request);
    const runId = readHeader(request, 'X-Fluksio-Run', RunIdHeader, RUN_WHAT);
    const lease = readHeader(request, 'X-Fluksio-Lease', LeaseId, LEASE_WHAT);
    const run = await holdLease({ db: context.db, runner, runId, lease, running: true });
    return { run, digest };
  }
}

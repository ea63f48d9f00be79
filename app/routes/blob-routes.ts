import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import type { BlobUploadReply } from '../../schemas/protocol/blob-upload-reply.js';
import { LeaseId } from '../../schemas/protocol/lease-id.js';
import type { ApiTokenRow } from '../../schemas/tables/api-tokens.js';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import { addBlobRef } from '../../store/blobs/add-blob-ref.js';
import { confirmBlobRef } from '../../store/blobs/confirm-blob-ref.js';
import { hasBlobRef } from '../../store/blobs/has-blob-ref.js';
import { recordBlobUpload } from '../../store/blobs/record-blob-upload.js';
import { BlobDigestMismatchError, BlobTooLargeError } from '../blobs/blob-upload-errors.js';
import { blobDigestParam } from '../http/blob-digest-param.js';
import { authenticateRunner } from '../http/authenticate-runner.js';
import { authenticateSubmitter, tokenReaches } from '../http/authenticate-submitter.js';
import { holdLease } from '../http/hold-lease.js';
import { HttpError } from '../http/http-error.js';
import { loadRun, noSuchRun } from '../http/load-run.js';
import { parseInput } from '../http/parse-input.js';
import { readHeader } from '../http/read-header.js';
import { requestAuth } from '../http/request-auth.js';
import { RunIdHeader } from '../http/run-id-params.js';
import type { RouteContext } from '../route-context.js';

const BlobQuery = z.object({ run: RunIdHeader.optional() });
/** What `X-Fluksio-Lease` and `X-Fluksio-Run` hold, for the 400 that misses them. */
export const LEASE_WHAT = 'the lease this run was claimed with';
export const RUN_WHAT = 'the id of the run this blob belongs to';

/**
 * `HEAD|GET|PUT /api/v1/blobs/sha256:<hex>`, with `X-Fluksio-Run` (or `?run=`) naming the run. A
 * runner (its token and the run's lease in `X-Fluksio-Lease`) uploads the run's blobs
 * and reads its repository's; a submitter's API token reads the blobs of its
 * repositories' runs (`fluksio pull`). A blob is visible to a repository only once one of
 * its runs uploaded those very bytes: knowing a digest is not enough to read it. With a
 * store that hands out presigned URLs (S3), a GET that passes those checks is answered
 * `307` to the blob's short-lived URL, and uploads go through blobUploadRoutes: bytes
 * never pass through this process. Those that do are counted (BlobByteCounters).
 */
export function blobRoutes(app: FastifyInstance, context: RouteContext): void {
  const uploaderAuth = requestAuth((request) =>
    authenticateRunner(context.db, request, context.settings.onlineWindowMs),
  );
  // A runner names its run's lease; `fluksio pull` shows an API token.
  const readerAuth = requestAuth(async (request): Promise<{ runner: RunnerRow } | { token: ApiTokenRow }> =>
    request.headers['x-fluksio-lease'] !== undefined
      ? { runner: await authenticateRunner(context.db, request, context.settings.onlineWindowMs) }
      : { token: await authenticateSubmitter(context.db, request, 'read') },
  );
  const reader = { onRequest: readerAuth.onRequest };

  void app.register(async (scope) => {
    // Uploads are streamed to disk as they arrive, whatever their declared type.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

    scope.head('/api/v1/blobs/:digest', reader, async (request, reply) => {
      const { size } = await readableBlob(request);
      return reply.header('content-length', size).type('application/octet-stream').send();
    });

    scope.get('/api/v1/blobs/:digest', { ...reader, exposeHeadRoute: false }, async (request, reply) => {
      const { digest, size } = await readableBlob(request);
      const { transfers } = context.blobs;
      if (transfers.via === 'url') return reply.redirect(await transfers.downloadUrl(digest), 307);
      const body = context.blobBytes.count(transfers.read(digest), 'out');
      return reply.header('content-length', size).type('application/octet-stream').send(body);
    });

    scope.put('/api/v1/blobs/:digest', { onRequest: uploaderAuth.onRequest }, async (request, reply) => {
      const runner = uploaderAuth.of(request);
      const digest = blobDigestParam(request);
      const runId = readHeader(request, 'X-Fluksio-Run', RunIdHeader, RUN_WHAT);
      const lease = readHeader(request, 'X-Fluksio-Lease', LeaseId, LEASE_WHAT);
      const run = await holdLease({ db: context.db, runner, runId, lease, running: true });
      const declared = Number(request.headers['content-length'] ?? 0);
      if (declared > context.settings.maxBlobBytes) {
        throw tooLarge(new BlobTooLargeError(context.settings.maxBlobBytes));
      }
      const { transfers } = context.blobs;
      if (transfers.via === 'url') {
        throw new HttpError(
          409,
          `body: this control plane keeps blobs in ${context.blobs.location}; upload with POST /api/v1/blobs/${digest}/uploads (a presigned URL), not through it`,
          'body',
        );
      }
      // Before the bytes are written: a gc deleting this digest now finishes first, and a
      // later one keeps it (openBlobDeletionGuard).
      await recordBlobUpload({ db: context.db, digest, runId });
      let size: number;
      try {
        const body = (request.body as Readable | undefined) ?? Readable.from([]);
        size = await transfers.write(
          digest,
          context.blobBytes.count(body, 'in'),
          context.settings.maxBlobBytes,
        );
      } catch (error) {
        if (error instanceof BlobDigestMismatchError) {
          throw new HttpError(400, `digest: ${error.message}`, 'digest');
        }
        if (error instanceof BlobTooLargeError) throw tooLarge(error);
        throw error;
      }
      await addBlobRef({ db: context.db, repository: run.repository, digest, size, runId });
      request.log.info({ runId, digest, size }, 'blob stored');
      return reply.code(201).send({ digest, size } satisfies BlobUploadReply);
    });
  });

  /**
   * The digest and size of a blob the caller may read, or 404. A runner asking for its
   * run confirms the ref (confirmBlobRef): it is about to rely on the blob.
   */
  async function readableBlob(request: FastifyRequest): Promise<{ digest: BlobDigest; size: number }> {
    const reader = await readerOf(request);
    const digest = blobDigestParam(request);
    const { repository } = reader;
    const readable =
      reader.runId === null
        ? await hasBlobRef({ db: context.db, repository, digest })
        : await confirmBlobRef({ db: context.db, repository, digest, runId: reader.runId });
    const size = readable ? await context.blobs.size(digest) : null;
    if (size === null) throw new HttpError(404, `Blob ${digest} is not stored for ${repository}`, 'digest');
    return { digest, size };
  }

  /**
   * The repository whose blobs the caller may read: its run's, by lease (with the run id
   * of that lease) or by API token (run id null: a reader, not a run relying on blobs).
   */
  async function readerOf(request: FastifyRequest): Promise<{ repository: string; runId: string | null }> {
    const caller = readerAuth.of(request);
    if ('runner' in caller) {
      const { runner } = caller;
      const runId = readHeader(request, 'X-Fluksio-Run', RunIdHeader, RUN_WHAT);
      const lease = readHeader(request, 'X-Fluksio-Lease', LeaseId, LEASE_WHAT);
      const run = await holdLease({ db: context.db, runner, runId, lease, running: true });
      return { repository: run.repository, runId };
    }
    const { token } = caller;
    // `fluksio pull` names the run in the query (`?run=<id>`), the runner in a header.
    const { run: fromQuery } = parseInput(BlobQuery, request.query, 'run');
    const runId =
      fromQuery !== undefined && request.headers['x-fluksio-run'] === undefined
        ? fromQuery
        : readHeader(request, 'X-Fluksio-Run', RunIdHeader, RUN_WHAT);
    const run = await loadRun(context.db, runId);
    if (!tokenReaches(token, run.repository)) {
      throw noSuchRun(runId);
    }
    return { repository: run.repository, runId: null };
  }
}

/** 413 for an upload past FLUKSIO_MAX_BLOB_SIZE. */
export function tooLarge(error: BlobTooLargeError): HttpError {
  return new HttpError(413, error.message, 'body');
}

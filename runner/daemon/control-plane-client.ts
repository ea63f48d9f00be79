import type { z } from 'zod';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { CacheEntry } from '../../schemas/cache-entry.js';
import { CacheCandidates } from '../../schemas/protocol/cache-candidates.js';
import { Claim } from '../../schemas/protocol/claim.js';
import { PreviousStage } from '../../schemas/previous-stage.js';
import {
  EventBatchReply,
  HeartbeatReply,
  StartReply,
  type EventBatch,
  type FinishRequest,
  type ReleaseRequest,
  type StartRequestInput,
} from '../../schemas/protocol/lease-requests.js';
import { ControlPlaneHttp, type CallOptions, type ControlPlaneHttpOptions } from './control-plane-http.js';

export type { CallOptions } from './control-plane-http.js';

export interface ControlPlaneClientOptions extends ControlPlaneHttpOptions {
  /** One blob download's or upload's time limit (a model can be gigabytes). @defaultValue 3600000 */
  transferTimeoutMs?: number;
}

/** The run a request is about and the lease it is written under. */
export interface RunLease {
  runId: string;
  lease: string;
}

/** A blob upload's bytes, opened anew for each attempt. */
export type BlobBody = { bytes: Uint8Array } | { open(): Readable; size: number };

/**
 * The runner's side of the control-plane protocol (schemas/protocol, DESIGN §6): one
 * typed method per endpoint, each reply validated with the protocol's zod schemas.
 * Retries and errors are control-plane-http.ts's: transient failures are retried with
 * backoff; 401, 403, 404 and 409 surface as the error classes the daemon branches on.
 */
export class ControlPlaneClient {
  private readonly http: ControlPlaneHttp;
  private readonly transferTimeoutMs: number;

  constructor(options: ControlPlaneClientOptions) {
    this.http = new ControlPlaneHttp(options);
    this.transferTimeoutMs = options.transferTimeoutMs ?? 3_600_000;
  }

  /** The control plane's origin, for log lines and messages. */
  get origin(): string {
    return this.http.base.origin;
  }

  /** Waits up to `waitSeconds` for a run this runner may take (a fork's only with `acceptForks`); null when none came. */
  async claim(waitSeconds: number, acceptForks: boolean, call: CallOptions = {}): Promise<Claim | null> {
    const response = await this.http.send('POST', '/api/v1/runner/claim', {
      call,
      json: { waitSeconds, acceptForks },
      timeoutMs: this.http.requestTimeoutMs + waitSeconds * 1000,
    });
    if (response.status === 204) return null;
    return this.http.parse(response, Claim, 'POST /api/v1/runner/claim');
  }

  /** Renews the lease; the reply says whether to stop the run. */
  async heartbeat(run: RunLease, call: CallOptions = {}): Promise<HeartbeatReply> {
    const path = `${runPath(run)}/heartbeat`;
    const response = await this.http.send('POST', path, { call, json: { lease: run.lease } });
    return this.http.parse(response, HeartbeatReply, `POST ${path}`);
  }

  /**
   * The checkout is verified: the run starts, stamped with what is about to execute. The
   * reply says whether it did: a run the control plane failed instead (its params are not
   * those it was queued with) must not run.
   */
  async start(
    run: RunLease,
    stamp: Omit<StartRequestInput, 'lease'>,
    call: CallOptions = {},
  ): Promise<StartReply> {
    const path = `${runPath(run)}/start`;
    const response = await this.http.send('POST', path, { call, json: { lease: run.lease, ...stamp } });
    return this.http.parse(response, StartReply, `POST ${path}`);
  }

  /** Uploads events; resolves once the control plane acknowledged them. */
  async sendEvents(
    run: RunLease,
    batch: Omit<EventBatch, 'lease'>,
    call: CallOptions = {},
  ): Promise<EventBatchReply> {
    const path = `${runPath(run)}/events`;
    const response = await this.http.send('POST', path, { call, json: { lease: run.lease, ...batch } });
    return this.http.parse(response, EventBatchReply, `POST ${path}`);
  }

  async finish(
    run: RunLease,
    result: Omit<z.input<typeof FinishRequest>, 'lease'>,
    call: CallOptions = {},
  ): Promise<void> {
    await this.http.send('POST', `${runPath(run)}/finish`, { call, json: { lease: run.lease, ...result } });
  }

  /**
   * Says the run's commit is fetched, passing back the claim's `git.extraHeader`, so the
   * control plane revokes that credential now instead of leaving it valid for the hour.
   */
  async fetched(run: RunLease, extraHeader: string, call: CallOptions = {}): Promise<void> {
    await this.http.send('POST', `${runPath(run)}/fetched`, {
      call,
      json: { lease: run.lease, extraHeader },
    });
  }

  /** Gives the run back to the queue (the runner is stopping). */
  async release(run: RunLease, reason: ReleaseRequest['reason'], call: CallOptions = {}): Promise<void> {
    await this.http.send('POST', `${runPath(run)}/release`, { call, json: { lease: run.lease, reason } });
  }

  /** The stage cache entry for a key, scoped by the control plane to the run's repository and trust domain. */
  async cacheEntry(run: RunLease, key: string, call: CallOptions = {}): Promise<CacheEntry | null> {
    const path = `${runPath(run)}/cache/${encodeURIComponent(key)}`;
    const response = await this.http.send('GET', path, { call, lease: run, allowNotFound: true });
    return response.status === 404 ? null : this.http.parse(response, CacheEntry, `GET ${path}`);
  }

  /** The entries of a traced stage's manifest key visible to the run, newest first. */
  async cacheCandidates(run: RunLease, manifestKey: string, call: CallOptions = {}): Promise<CacheEntry[]> {
    const path = `${runPath(run)}/cache-candidates/${encodeURIComponent(manifestKey)}`;
    const response = await this.http.send('GET', path, { call, lease: run });
    return (await this.http.parse(response, CacheCandidates, `GET ${path}`)).entries;
  }

  /** A stage's key inputs in the previous run of the pipeline visible to the run, or null. */
  async previousStage(run: RunLease, stage: string, call: CallOptions = {}): Promise<PreviousStage | null> {
    const path = `${runPath(run)}/cache?stage=${encodeURIComponent(stage)}`;
    const response = await this.http.send('GET', path, { call, lease: run, allowNotFound: true });
    return response.status === 404 ? null : this.http.parse(response, PreviousStage, `GET ${path}`);
  }

  async hasBlob(run: RunLease, digest: BlobDigest, call: CallOptions = {}): Promise<boolean> {
    const response = await this.http.send('HEAD', blobPath(digest), {
      call,
      lease: run,
      allowNotFound: true,
    });
    return response.status !== 404;
  }

  /**
   * Downloads a blob into `consume`, which gets the body as a stream; a failure inside
   * it (a connection dropped mid-body) retries the whole download. Null when absent.
   */
  async getBlob<T>(
    run: RunLease,
    digest: BlobDigest,
    consume: (body: Readable) => Promise<T>,
    call: CallOptions = {},
  ): Promise<T | null> {
    return this.http.withRetries(`GET ${blobPath(digest)}`, call, async (signal) => {
      const response = await this.http.attempt('GET', blobPath(digest), {
        lease: run,
        allowNotFound: true,
        signal,
        timeoutMs: this.transferTimeoutMs,
      });
      if (response.status === 404 || !response.body) return null;
      return consume(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>));
    });
  }

  /** Uploads a blob, streaming a file's bytes; the control plane verifies the digest. */
  async putBlob(run: RunLease, digest: BlobDigest, body: BlobBody, call: CallOptions = {}): Promise<void> {
    await this.http.withRetries(`PUT ${blobPath(digest)}`, call, (signal) =>
      this.http.attempt('PUT', blobPath(digest), {
        lease: run,
        signal,
        timeoutMs: this.transferTimeoutMs,
        body:
          'bytes' in body
            ? { data: body.bytes, size: body.bytes.byteLength }
            : { data: Readable.toWeb(body.open()), size: body.size },
      }),
    );
  }
}

function runPath(run: RunLease): string {
  return `/api/v1/runs/${encodeURIComponent(run.runId)}`;
}

function blobPath(digest: BlobDigest): string {
  return `/api/v1/blobs/${encodeURIComponent(digest).replace('%3A', ':')}`;
}

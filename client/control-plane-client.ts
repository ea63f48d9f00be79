import { RunListReply } from '../schemas/protocol/run-list.js';
import type { z } from 'zod';
import type { Readable } from 'node:stream';
import type { BlobDigest } from '../schemas/blob-digest.js';
import { CacheEntry } from '../schemas/cache-entry.js';
import { CacheCandidates } from '../schemas/protocol/cache-candidates.js';
import type { BlobUploadReply } from '../schemas/protocol/blob-upload-reply.js';
import type { CancelRunRequest } from '../schemas/protocol/cancel-run.js';
import { Claim, type ClaimRequest } from '../schemas/protocol/claim.js';
import { HealthReply } from '../schemas/protocol/health-reply.js';
import { LeasedWriteReply } from '../schemas/protocol/leased-write-reply.js';
import { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import { ResumeReply, type ResumeRequest } from '../schemas/protocol/resume-run.js';
import { RunMetricsReply } from '../schemas/protocol/run-metrics-reply.js';
import type { RunWatchRequest } from '../schemas/protocol/run-watch.js';
import { StageLogReply } from '../schemas/protocol/stage-log-reply.js';
import type { SubmitRunRequest } from '../schemas/protocol/submit-run.js';
import { PreviousStage } from '../schemas/previous-stage.js';
import {
  EventBatchReply,
  FetchedReply,
  HeartbeatReply,
  StartReply,
  type EventBatch,
  type FetchedRequest,
  type FinishRequest,
  type HeartbeatRequest,
  type ReleaseRequest,
  type StartRequestInput,
} from '../schemas/protocol/lease-requests.js';
import { blobPath, runPath } from './api-paths.js';
import type { BlobBody } from './blob-body.js';
import { ControlPlaneHttp, type CallOptions, type ControlPlaneHttpOptions } from './control-plane-http.js';
import { listRunsSearchParams, type ListRunsQuery } from './list-runs-query.js';
import { fenceOf, type RunLease } from './run-lease.js';
import { uploadBlob } from './upload-blob.js';

export type { CallOptions } from './control-plane-http.js';

export interface ControlPlaneClientOptions extends ControlPlaneHttpOptions {
  /** One blob download's or upload's time limit (a model can be gigabytes). @defaultValue 3600000 */
  transferTimeoutMs?: number;
}

/**
 * The control plane's API (schemas/protocol, DESIGN §6), for the runner daemon (a runner
 * token) and for submitters, `fluksio submit`/`show`/`cancel`/`pull` and the action's
 * submit mode (an API token): one typed method per endpoint, every request and reply
 * shaped by the protocol's zod schemas, every reply validated. Retries and errors are
 * control-plane-http.ts's: transient failures are retried with backoff; 401, 403, 404
 * and 409 surface as the error classes callers branch on (control-plane-errors.ts).
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

  // The runner's side: claims, and the writes and reads of the run it holds.

  /** Waits up to `waitSeconds` for a run this runner may take (a fork's only with `acceptForks`); null when none came. */
  async claim(waitSeconds: number, acceptForks: boolean, call: CallOptions = {}): Promise<Claim | null> {
    const json: ClaimRequest = { waitSeconds, acceptForks };
    const response = await this.http.send('POST', '/api/v1/runner/claim', {
      call,
      json,
      timeoutMs: this.http.requestTimeoutMs + waitSeconds * 1000,
    });
    if (response.status === 204) return null;
    return this.http.parse(response, Claim, 'POST /api/v1/runner/claim');
  }

  /**
   * Goes on with a run held before a restart: its claim, the lease renewed, the next seq,
   * and the lease's new epoch, which the run's writes carry from then on (`RunLease.epoch`).
   * Refused (isLeaseLost) once the run is not held, or has a cancel pending.
   */
  async resume(run: RunLease, call: CallOptions = {}): Promise<ResumeReply> {
    const json: ResumeRequest = { lease: run.lease, fencing: 'epoch' };
    return this.postLeased(run, 'resume', json, ResumeReply, call);
  }

  /** Renews the lease; the reply says whether to stop the run. */
  async heartbeat(run: RunLease, call: CallOptions = {}): Promise<HeartbeatReply> {
    const json: HeartbeatRequest = fenceOf(run);
    return this.postLeased(run, 'heartbeat', json, HeartbeatReply, call);
  }

  /**
   * Waits up to `waitSeconds` for the control plane to ask for the run's stop (a cancel,
   * its time limit); the reply says whether it did, as a heartbeat's does, and renews nothing.
   */
  async watch(run: RunLease, waitSeconds: number, call: CallOptions = {}): Promise<HeartbeatReply> {
    const json: RunWatchRequest = { lease: run.lease, waitSeconds };
    const timeoutMs = this.http.requestTimeoutMs + waitSeconds * 1000;
    return this.postLeased(run, 'watch', json, HeartbeatReply, call, timeoutMs);
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
    const json: StartRequestInput = { ...stamp, ...fenceOf(run) };
    return this.postLeased(run, 'start', json, StartReply, call);
  }

  /** Uploads events; resolves once the control plane acknowledged them. */
  async sendEvents(
    run: RunLease,
    batch: Omit<EventBatch, 'lease' | 'epoch'>,
    call: CallOptions = {},
  ): Promise<EventBatchReply> {
    const json: EventBatch = { ...batch, ...fenceOf(run) };
    return this.postLeased(run, 'events', json, EventBatchReply, call);
  }

  async finish(
    run: RunLease,
    result: Omit<z.input<typeof FinishRequest>, 'lease' | 'epoch'>,
    call: CallOptions = {},
  ): Promise<LeasedWriteReply> {
    const json: z.input<typeof FinishRequest> = { ...result, ...fenceOf(run) };
    return this.postLeased(run, 'finish', json, LeasedWriteReply, call);
  }

  /**
   * Says the run's commit is fetched, passing back the claim's `git.extraHeader`, so the
   * control plane revokes that credential now instead of leaving it valid for the hour.
   */
  async fetched(run: RunLease, extraHeader: string, call: CallOptions = {}): Promise<FetchedReply> {
    const json: FetchedRequest = { lease: run.lease, extraHeader };
    return this.postLeased(run, 'fetched', json, FetchedReply, call);
  }

  /** Gives the run back to the queue (the runner is stopping). */
  async release(
    run: RunLease,
    reason: ReleaseRequest['reason'],
    call: CallOptions = {},
  ): Promise<LeasedWriteReply> {
    const json: ReleaseRequest = { reason, ...fenceOf(run) };
    return this.postLeased(run, 'release', json, LeasedWriteReply, call);
  }

  /** The stage cache entry for a key, scoped by the control plane to the run's repository and trust domain. */
  async cacheEntry(run: RunLease, key: string, call: CallOptions = {}): Promise<CacheEntry | null> {
    const path = `${runPath(run.runId)}/cache/${encodeURIComponent(key)}`;
    const response = await this.http.send('GET', path, { call, lease: run, allowNotFound: true });
    return response.status === 404 ? null : this.http.parse(response, CacheEntry, `GET ${path}`);
  }

  /** The entries of a traced stage's manifest key visible to the run, newest first. */
  async cacheCandidates(run: RunLease, manifestKey: string, call: CallOptions = {}): Promise<CacheEntry[]> {
    const path = `${runPath(run.runId)}/cache-candidates/${encodeURIComponent(manifestKey)}`;
    const response = await this.http.send('GET', path, { call, lease: run });
    return (await this.http.parse(response, CacheCandidates, `GET ${path}`)).entries;
  }

  /** A stage's key inputs in the previous run of the pipeline visible to the run, or null. */
  async previousStage(run: RunLease, stage: string, call: CallOptions = {}): Promise<PreviousStage | null> {
    const path = `${runPath(run.runId)}/cache?stage=${encodeURIComponent(stage)}`;
    const response = await this.http.send('GET', path, { call, lease: run, allowNotFound: true });
    return response.status === 404 ? null : this.http.parse(response, PreviousStage, `GET ${path}`);
  }

  async hasBlob(run: RunLease, digest: BlobDigest, call: CallOptions = {}): Promise<boolean> {
    return (await this.storedBlobSize(run, digest, call)) !== null;
  }

  /**
   * The size the control plane holds a blob of the run's repository at (its HEAD, which
   * also confirms the blob's ref for the run), or null when it holds none.
   */
  async storedBlobSize(run: RunLease, digest: BlobDigest, call: CallOptions = {}): Promise<number | null> {
    const response = await this.http.send('HEAD', blobPath(digest), {
      call,
      lease: run,
      allowNotFound: true,
    });
    if (response.status === 404) return null;
    const length = Number(response.header('content-length'));
    return Number.isSafeInteger(length) && length >= 0 ? length : null;
  }

  /**
   * Downloads a blob of the run's repository into `consume`, which gets the body as a
   * stream; a failure inside it (a connection dropped mid-body) retries the whole
   * download. Null when absent.
   */
  async getBlob<T>(
    run: RunLease,
    digest: BlobDigest,
    consume: (body: Readable) => Promise<T>,
    call: CallOptions = {},
  ): Promise<T | null> {
    return this.http.download(
      blobPath(digest),
      { lease: run, allowNotFound: true },
      consume,
      call,
      this.transferTimeoutMs,
    );
  }

  /**
   * Uploads a blob, streaming a file's bytes. The control plane says where to
   * (BlobUploadTicket): to itself, which verifies the digest as the bytes arrive, or to its
   * store's presigned URL (S3), after which it checks the stored object before recording
   * it. The bytes were hashed here first: `digest` is theirs.
   */
  async putBlob(
    run: RunLease,
    digest: BlobDigest,
    body: BlobBody,
    call: CallOptions = {},
  ): Promise<BlobUploadReply> {
    return uploadBlob({ http: this.http, run, digest, body, call, timeoutMs: this.transferTimeoutMs });
  }

  // The submitter's side: queue, read and cancel runs, and pull their outputs.

  /** `GET /healthz`: whether a fluksio control plane answers at the URL at all. */
  async health(call: CallOptions = {}): Promise<HealthReply> {
    return this.http.parse(await this.http.send('GET', '/healthz', { call }), HealthReply, 'GET /healthz');
  }

  /**
   * Queues one run. `idempotencyKey` names this submission: the same key again (a
   * retried request) answers the run the first made instead of queuing a second.
   */
  async submitRun(
    request: z.input<typeof SubmitRunRequest>,
    idempotencyKey: string,
    call: CallOptions = {},
  ): Promise<RemoteRunReport> {
    const path = '/api/v1/runs';
    const response = await this.http.send('POST', path, {
      call,
      json: request,
      headers: { 'idempotency-key': idempotencyKey },
    });
    return this.http.parse(response, RemoteRunReport, `POST ${path}`);
  }

  /**
   * The newest runs of the repositories the token reaches (or of one of them, and of one
   * of its pipeline files), optionally those whose id starts with `prefix`, at one of `commits` (at most RUN_LIST_COMMITS_MAX),
   * of `branch` or in `status`: `fluksio runs --remote`, short ids resolved, and the runs a
   * git revision stands for.
   */
  async listRuns(query: ListRunsQuery, call: CallOptions = {}): Promise<RunListReply['runs']> {
    const params = listRunsSearchParams(query);
    return (await this.get(`/api/v1/runs?${params.toString()}`, RunListReply, call)).runs;
  }

  /** A run as the control plane has it now: its state, stages, metrics and annotations. */
  async run(
    runId: string,
    call: CallOptions = {},
    { baselineCommits = [] }: { baselineCommits?: readonly string[] } = {},
  ): Promise<RemoteRunReport> {
    // Where to look for the baseline, nearest first (RunReportQuery): the caller has the history.
    const query = baselineCommits.length > 0 ? `?baseline-commits=${baselineCommits.join(',')}` : '';
    return this.get(`${runPath(runId)}${query}`, RemoteRunReport, call);
  }

  /** A run's streamed metric series, by metric name. */
  async runMetrics(runId: string, call: CallOptions = {}): Promise<RunMetricsReply['series']> {
    return (await this.get(`${runPath(runId)}/metrics`, RunMetricsReply, call)).series;
  }

  /** A stage's whole log, line by line. */
  async stageLog(runId: string, stage: string, call: CallOptions = {}): Promise<string[]> {
    return (await this.get(`${runPath(runId)}/logs/${encodeURIComponent(stage)}`, StageLogReply, call)).lines;
  }

  /** Cancels a run (see CancelRunRequest); answers the run as it is then. */
  async cancelRun(
    runId: string,
    request: CancelRunRequest = {},
    call: CallOptions = {},
  ): Promise<RemoteRunReport> {
    const path = `${runPath(runId)}/cancel`;
    const response = await this.http.send('POST', path, { call, json: request });
    return this.http.parse(response, RemoteRunReport, `POST ${path}`);
  }

  /**
   * Downloads a blob of a run's outputs as a submitter (`fluksio pull`) into `consume`,
   * retried whole as getBlob is; a blob the token may not read is a NotFoundError.
   */
  async pullBlob<T>(
    runId: string,
    digest: string,
    consume: (body: Readable) => Promise<T>,
    call: CallOptions = {},
  ): Promise<T> {
    const path = `${blobPath(digest)}?run=${encodeURIComponent(runId)}`;
    const result = await this.http.download(path, {}, consume, call, this.transferTimeoutMs);
    if (result === null) throw new Error(`The control plane answered GET ${path} without a body`);
    return result;
  }

  private async get<S extends z.ZodType>(path: string, schema: S, call: CallOptions): Promise<z.infer<S>> {
    return this.http.parse(await this.http.send('GET', path, { call }), schema, `GET ${path}`);
  }

  /** A leased write of the run (`POST /api/v1/runs/:id/<what>`), its reply validated. */
  private async postLeased<S extends z.ZodType>(
    run: RunLease,
    what: string,
    json: { lease: string },
    schema: S,
    call: CallOptions,
    timeoutMs?: number,
  ): Promise<z.infer<S>> {
    const path = `${runPath(run.runId)}/${what}`;
    const response = await this.http.send('POST', path, { call, json, ...(timeoutMs ? { timeoutMs } : {}) });
    return this.http.parse(response, schema, `POST ${path}`);
  }
}

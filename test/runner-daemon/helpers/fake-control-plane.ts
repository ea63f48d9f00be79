import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import type { CacheEntry } from '../../../schemas/cache-entry.js';
import type { PreviousStage } from '../../../schemas/previous-stage.js';
import { ClaimRequest, type Claim } from '../../../schemas/protocol/claim.js';
import {
  EventBatch,
  FinishRequest,
  HeartbeatRequest,
  ReleaseRequest,
  StartRequest,
  type HeartbeatReply,
} from '../../../schemas/protocol/lease-requests.js';
import { RunWatchRequest } from '../../../schemas/protocol/run-watch.js';
import type { RunEvent } from '../../../schemas/run-event.js';

/** What a run looks like to the fake: its claim and everything the runner wrote for it. */
export interface FakeRun {
  claim: Claim;
  state: 'queued' | 'running' | 'finished' | 'released';
  started: z.infer<typeof StartRequest> | null;
  /** Applied events by seq: each seq once. */
  events: Map<number, RunEvent>;
  finish: z.infer<typeof FinishRequest> | null;
  release: z.infer<typeof ReleaseRequest> | null;
  heartbeats: number;
  /** Watches answered so far with the cancel (`stopWith`). */
  watchesCancelled: number;
  /** Set to have the parked watch, or else the next heartbeat reply, tell the runner to stop. */
  stopWith: Omit<HeartbeatReply, 'cancel'> | null;
}

/**
 * A test double of the control plane's runner API (schemas/protocol), in memory, over
 * real HTTP. It checks every request body with the protocol's schemas (400 otherwise),
 * the runner token (401) and the lease (409), dedupes events by seq, verifies blob
 * uploads against their digest, and writes cache entries from `ran` stages' finish
 * events as the real control plane does. Tests queue claims and look at what arrived.
 */
export class FakeControlPlane {
  readonly token = randomBytes(32).toString('hex');
  readonly runs = new Map<string, FakeRun>();
  readonly blobs = new Map<string, Buffer>();
  /** Blobs answered with bytes made as they are sent (generateBlob), by digest. */
  private readonly generated = new Map<string, { size: number; sent: number }>();
  readonly cache = new Map<string, CacheEntry>();
  /**
   * By stage name: the key inputs it had in the latest run whose finish event carried them,
   * what `GET /api/v1/runs/:id/cache?stage=NAME` answers (all claims are of one pipeline here).
   */
  readonly previous = new Map<string, PreviousStage>();
  /** Every request as `METHOD path`, with its headers. */
  readonly requests: { line: string; headers: IncomingMessage['headers'] }[] = [];
  /** Answer this many next requests (of any kind) with this status before serving again. */
  failures: { count: number; status: number } = { count: 0, status: 503 };
  /** Refuse every request whose `METHOD path` matches, with this status and sentence. */
  refusal: { request: RegExp; status: number; error: string } | null = null;
  /** Whether `POST /api/v1/runs/:id/watch` is served; without it, 404 (a control plane that predates it). */
  watches = true;
  private queue: string[] = [];
  private waiters: (() => void)[] = [];
  private server: Server | null = null;
  private port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      this.handle(request, response).catch((error: unknown) => {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: String(error) }));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  /** Stops answering: connections are refused until start() again (same port). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  /** Queues a run; the claim gets a fresh lease. */
  enqueue(claim: Omit<Claim, 'lease'> & { lease?: string }): FakeRun {
    const run: FakeRun = {
      claim: { ...claim, lease: claim.lease ?? randomBytes(32).toString('hex') },
      state: 'queued',
      started: null,
      events: new Map(),
      finish: null,
      release: null,
      heartbeats: 0,
      watchesCancelled: 0,
      stopWith: null,
    };
    this.runs.set(claim.run.id, run);
    this.queue.push(claim.run.id);
    for (const wake of this.waiters.splice(0)) wake();
    return run;
  }

  /** Resolves when the run satisfies `done`, polling; rejects after `timeoutMs`. */
  async waitFor(runId: string, done: (run: FakeRun) => boolean, timeoutMs = 30_000): Promise<FakeRun> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const run = this.runs.get(runId);
      if (run && done(run)) return run;
      if (Date.now() > deadline)
        throw new Error(`run ${runId} did not get there in ${timeoutMs} ms: ${JSON.stringify(run?.state)}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /**
   * Answers GET of `digest` with `size` bytes of `x`, made as they are sent, so a test can
   * offer a blob far larger than it would hold (or than its digest says). `sent` counts what
   * went out before the client stopped reading.
   */
  generateBlob(digest: string, size: number): { sent: () => number } {
    const blob = { size, sent: 0 };
    this.generated.set(digest, blob);
    return { sent: () => blob.sent };
  }

  /** The run's applied events in seq order. */
  eventsOf(runId: string): RunEvent[] {
    return [...(this.runs.get(runId)?.events.values() ?? [])].sort((a, b) => a.seq - b.seq);
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://x');
    const line = `${request.method} ${url.pathname}`;
    this.requests.push({ line, headers: request.headers });
    const send = (status: number, body?: unknown) => {
      response.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' });
      response.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const body = await readBody(request);
    if (this.refusal?.request.test(line)) {
      return send(this.refusal.status, { error: this.refusal.error, field: 'events' });
    }
    if (this.failures.count > 0) {
      this.failures.count -= 1;
      return send(this.failures.status, { error: 'the fake is failing on purpose' });
    }
    if (request.headers.authorization !== `Bearer ${this.token}`)
      return send(401, { error: 'unknown runner token' });

    if (line === 'POST /api/v1/runner/claim') {
      const input = parse(ClaimRequest, body);
      if (!input) return send(400, { error: 'bad claim request', field: 'body' });
      const id = await this.nextQueued(input.waitSeconds * 1000, response);
      if (!id) return send(204);
      const run = this.runs.get(id) as FakeRun;
      run.state = 'running';
      return send(200, run.claim);
    }
    const blob = /^\/api\/v1\/blobs\/(sha256:[0-9a-f]{64})(\/uploads)?$/.exec(url.pathname);
    if (blob?.[2] !== undefined) return send(200, { via: 'control-plane' });
    if (blob) return this.handleBlob(request, response, blob[1] as string, body, send);
    const match =
      /^\/api\/v1\/runs\/([^/]+)\/(heartbeat|watch|start|events|finish|release|cache)(?:\/([0-9a-f]{64}))?$/.exec(
        url.pathname,
      );
    const run = match ? this.runs.get(decodeURIComponent(match[1] as string)) : undefined;
    if (!match || !run || (match[2] === 'watch' && !this.watches))
      return send(404, { error: `no such run or endpoint: ${line}` });
    const action = match[2];
    if (action === 'cache') {
      if (request.headers['x-fluksio-lease'] !== run.claim.lease || run.state !== 'running')
        return send(409, { error: 'stale lease' });
      if (match[3] === undefined) {
        const stage = url.searchParams.get('stage');
        const previous = stage === null ? undefined : this.previous.get(stage);
        // Only an earlier run's: this run's own stages are not what it compares with.
        return previous && previous.runId !== run.claim.run.id
          ? send(200, previous)
          : send(404, { error: 'no previous stage', field: 'stage' });
      }
      const entry = this.cache.get(match[3]);
      return entry ? send(200, entry) : send(404, { error: 'no entry', field: 'key' });
    }
    const schema = {
      heartbeat: HeartbeatRequest,
      watch: RunWatchRequest,
      start: StartRequest,
      events: EventBatch,
      finish: FinishRequest,
      release: ReleaseRequest,
    }[action as 'heartbeat'] as z.ZodType<{ lease: string }>;
    const input = parse(schema, body);
    if (!input) return send(400, { error: `malformed ${action} body`, field: 'body' });
    if (input.lease !== run.claim.lease || run.state !== 'running')
      return send(409, { error: 'stale lease' });
    switch (action) {
      case 'heartbeat': {
        run.heartbeats += 1;
        const stop = run.stopWith;
        return send(200, stop ? { cancel: true, ...stop } : { cancel: false, reason: null, finishAs: null });
      }
      case 'watch': {
        // Parked until the test sets stopWith or the lease goes, as the real one is woken.
        const deadline = Date.now() + (input as RunWatchRequest).waitSeconds * 1000;
        const lease = input.lease;
        while (
          !run.stopWith &&
          run.claim.lease === lease &&
          run.state === 'running' &&
          Date.now() < deadline
        ) {
          if (this.server === null || response.destroyed) return;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        if (run.claim.lease !== lease || run.state !== 'running') return send(409, { error: 'stale lease' });
        const stop = run.stopWith;
        if (stop) run.watchesCancelled += 1;
        return send(200, stop ? { cancel: true, ...stop } : { cancel: false, reason: null, finishAs: null });
      }
      case 'start':
        run.started = input as FakeRun['started'];
        return send(200, { status: 'running', reason: null });
      case 'events': {
        const batch = input as z.infer<typeof EventBatch>;
        let applied = 0;
        for (const event of batch.events) {
          if (run.events.has(event.seq)) continue;
          run.events.set(event.seq, event);
          applied += 1;
          if (event.type === 'stage.finished' && event.stage.keyInputs) {
            this.previous.set(event.stage.name, {
              runId: run.claim.run.id,
              keyInputs: event.stage.keyInputs,
            });
          }
          if (
            event.type === 'stage.finished' &&
            event.stage.status === 'ran' &&
            event.stage.cacheKey &&
            event.stage.keyInputs
          ) {
            this.cache.set(event.stage.cacheKey, {
              key: event.stage.cacheKey,
              stage: event.stage.name,
              runId: run.claim.run.id,
              outs: event.stage.outs,
              metrics: event.stage.metrics,
              keyInputs: event.stage.keyInputs,
              createdAt: new Date().toISOString(),
            });
          }
        }
        return send(200, { applied, acked: batch.events.length });
      }
      case 'finish':
        run.finish = input as FakeRun['finish'];
        run.state = 'finished';
        return send(200, { status: run.finish?.status });
      default:
        run.release = input as FakeRun['release'];
        run.state = 'released';
        return send(200, { status: 'queued' });
    }
  }

  private handleBlob(
    request: IncomingMessage,
    response: ServerResponse,
    digest: string,
    body: Buffer,
    send: (status: number, body?: unknown) => void,
  ): void {
    const run = this.runs.get(String(request.headers['x-fluksio-run']));
    if (!run || run.claim.lease !== request.headers['x-fluksio-lease'] || run.state !== 'running')
      return send(409, { error: 'stale lease' });
    const stored = this.blobs.get(digest);
    if (request.method === 'HEAD') {
      if (!stored) return send(404);
      // As the control plane answers: the size it holds the blob at.
      response.writeHead(200, { 'content-length': stored.length });
      return void response.end();
    }
    const generated = this.generated.get(digest);
    if (request.method === 'GET' && generated) return sendGenerated(response, generated);
    if (request.method === 'GET') {
      if (!stored) return send(404, { error: 'no such blob' });
      response.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': stored.length,
      });
      return void response.end(stored);
    }
    const actual = `sha256:${createHash('sha256').update(body).digest('hex')}`;
    if (actual !== digest) return send(400, { error: `the bytes hash to ${actual}`, field: 'body' });
    this.blobs.set(digest, body);
    return send(201, { digest, size: body.length });
  }

  /** The next queued run, waiting up to `waitMs`; none for a claimer that went away meanwhile (a runner stopped). */
  private nextQueued(waitMs: number, response: ServerResponse): Promise<string | null> {
    const next = this.queue.shift();
    if (next) return Promise.resolve(next);
    return new Promise((resolve) => {
      const done = (id: string | null) => {
        clearTimeout(timer);
        response.off('close', gone);
        this.waiters = this.waiters.filter((waiter) => waiter !== wake);
        resolve(id);
      };
      const wake = () => done(this.queue.shift() ?? null);
      const gone = () => done(null);
      const timer = setTimeout(gone, waitMs);
      response.once('close', gone);
      this.waiters.push(wake);
    });
  }
}

/** `blob.size` bytes of `x`, 64 KiB at a time as the client reads them, counted in `blob.sent`. */
function sendGenerated(response: ServerResponse, blob: { size: number; sent: number }): void {
  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': blob.size });
  const chunk = Buffer.alloc(64 * 1024, 0x78);
  const more = () => {
    while (!response.destroyed && blob.sent < blob.size) {
      const next = chunk.subarray(0, Math.min(chunk.length, blob.size - blob.sent));
      blob.sent += next.length;
      if (!response.write(next)) return;
    }
    if (!response.destroyed) response.end();
  };
  response.on('drain', more);
  more();
}

function parse<S extends z.ZodType>(schema: S, body: Buffer): z.infer<S> | null {
  try {
    const result = schema.safeParse(JSON.parse(body.toString('utf8') || '{}'));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { openBlobStorage } from '../../app/blobs/open-blob-storage.js';
import { buildServer } from '../../app/build-server.js';
import { readControlPlaneSettings, type ControlPlaneSettings } from '../../app/control-plane-settings.js';
import { hashToken } from '../../app/http/hash-token.js';
import type { Claim } from '../../schemas/protocol/claim.js';
import type { ProtocolRange } from '../../schemas/protocol/protocol-version.js';
import type { SubmitRunRequest } from '../../schemas/protocol/submit-run.js';
import type { RunnerRow } from '../../schemas/tables/runners.js';
import type { Database } from '../../store/db/database.js';
import { createApiToken } from '../../store/tokens/create-api-token.js';
import { createRunner } from '../../store/runners/create-runner.js';

/** The Redis tests use; each test gets its own key prefix in it. */
export const TEST_REDIS_URL = process.env.FLUKSIO_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A commit id for submitted runs (the control plane never fetches it). */
export const COMMIT = 'a'.repeat(40);

export interface TestControlPlane {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  db: Database;
  redis: Redis;
  settings: ControlPlaneSettings;
  blobsRoot: string;
  server: FastifyInstance;
  /** fetch against the server, with `token` as the bearer and `json` as the body when given. */
  call(
    method: string,
    urlPath: string,
    options?: {
      token?: string;
      json?: unknown;
      headers?: Record<string, string>;
      body?: Uint8Array | string;
    },
  ): Promise<{ status: number; json: Record<string, unknown>; text: string; headers: Headers }>;
  /** Registers a runner; resolves with its token. */
  addRunner(runner: { name: string; owner?: string; labels?: string[]; repositories?: string[] }): Promise<{
    token: string;
    row: RunnerRow;
  }>;
  /** Creates an API token; resolves with the token. */
  addApiToken(token: { name?: string; repositories: string[]; scope?: 'read' | 'submit' }): Promise<string>;
  /** `POST /api/v1/runs` with an Idempotency-Key (a fresh one unless given). */
  submit(
    token: string,
    body: Partial<SubmitRunRequest> & Record<string, unknown>,
    key?: string,
  ): Promise<{ status: number; json: Record<string, unknown> }>;
  /** `POST /api/v1/runner/claim`; the Claim, or null on 204. */
  claim(runnerToken: string, waitSeconds?: number): Promise<Claim | null>;
  close(): Promise<void>;
}

/**
 * A port nothing listens on at this moment, for a server whose public URL (an OAuth
 * callback) must be known before it starts.
 */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Empties the tables the control plane writes, between tests sharing one database: each a new deployment, bound to no blob store. */
export async function resetTables(db: Database): Promise<void> {
  await db.execute(
    sql`truncate runs, runners, api_tokens, control_plane_availability, cache_entries, blob_refs, blob_uploads, blob_store_binding, stages, metric_points, annotations, applied_events, log_lines cascade`,
  );
}

/** Deletes every Redis key under `prefix` (what BullMQ's obliterate does for one queue, for all of them). */
export async function removeKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}

/** A fresh Redis key prefix for one test. */
export function testPrefix(): string {
  return `fluksio-test-${process.pid}-${randomBytes(4).toString('hex')}`;
}

/**
 * The control plane's HTTP server on an ephemeral port over `db`, with a Redis prefix and a
 * blob directory of its own (or the store `env` names), and settings read (by the real reader) from `env` on top of
 * test defaults: re-checks every 200 ms, file:// clone URLs allowed.
 */
export async function startTestControlPlane({
  db,
  env = {},
  redis: givenRedis,
  port = 0,
  logger = pino({ level: process.env.FLUKSIO_TEST_LOG ?? 'silent' }),
  protocols,
}: {
  db: Database;
  env?: Record<string, string>;
  /** A Redis connection to use instead of a fresh one to the test Redis. */
  redis?: Redis;
  /** The port to listen on (one reserved with freePort, for a public URL known in advance); 0 picks one. */
  port?: number;
  /** Where the server logs. @defaultValue silent, or at FLUKSIO_TEST_LOG's level */
  logger?: Logger;
  /** The protocols it answers, to pose as another release. @defaultValue this fluksio's */
  protocols?: ProtocolRange;
}): Promise<TestControlPlane> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'fluksio-app-'));
  const settings = readControlPlaneSettings({
    REDIS_URL: TEST_REDIS_URL,
    FLUKSIO_QUEUE_PREFIX: testPrefix(),
    FLUKSIO_DATA_DIR: dataDir,
    FLUKSIO_CLAIM_RECHECK: '200ms',
    FLUKSIO_ALLOW_FILE_URLS: 'true',
    HOST: '127.0.0.1',
    PORT: '0',
    ...env,
  });
  const redis = givenRedis ?? new Redis(TEST_REDIS_URL);
  const blobsRoot = path.join(dataDir, 'blobs');
  const server = buildServer({
    db,
    redis,
    settings,
    blobs: openBlobStorage(settings),
    logger,
    ...(protocols ? { protocols } : {}),
  });
  const url = await server.listen({ host: '127.0.0.1', port });

  const call: TestControlPlane['call'] = async (method, urlPath, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    let body: string | Uint8Array | undefined = options.body;
    if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.json);
    }
    const response = await fetch(`${url}${urlPath}`, { method, headers, body });
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      // Not JSON (a blob, Prometheus text): `text` has it.
    }
    return { status: response.status, json, text, headers: response.headers };
  };

  return {
    url,
    db,
    redis,
    settings,
    blobsRoot,
    server,
    call,
    async addRunner({ name, owner = 'acme', labels = [], repositories = [] }) {
      const token = randomBytes(32).toString('hex');
      const row = await createRunner({ db, name, owner, labels, repositories, tokenHash: hashToken(token) });
      return { token, row };
    },
    async addApiToken({ name = `token-${randomBytes(3).toString('hex')}`, repositories, scope = 'submit' }) {
      const token = randomBytes(32).toString('hex');
      await createApiToken({ db, name, repositories, scope, tokenHash: hashToken(token) });
      return token;
    },
    async submit(token, body, key = randomBytes(8).toString('hex')) {
      const { status, json } = await call('POST', '/api/v1/runs', {
        token,
        json: { repository: 'acme/model', commit: COMMIT, ...body },
        headers: { 'idempotency-key': key },
      });
      return { status, json };
    },
    async claim(runnerToken, waitSeconds = 0) {
      const { status, json, text } = await call('POST', '/api/v1/runner/claim', {
        token: runnerToken,
        json: { waitSeconds },
      });
      if (status === 204) return null;
      if (status !== 200) throw new Error(`claim answered ${status}: ${text}`);
      return json as unknown as Claim;
    },
    async close() {
      await server.close();
      if (!givenRedis) {
        await removeKeys(redis, settings.queuePrefix);
        await redis.quit();
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import {
  readBlobStorageSettings,
  S3_MAX_SINGLE_UPLOAD,
  type BlobStorageSettings,
} from './blobs/blob-storage-settings.js';
import { readGitHubAppSettings, type AllowedOwner, type GitHubAppSettings } from './github-app-settings.js';
import { InvalidSettingsError } from './invalid-settings-error.js';
import { duration, flag, hostList, port, serviceUrl, size } from '../schemas/env-values.js';
import { MAX_LOG_LIMIT } from '../schemas/log-limit.js';

/**
 * How the control plane (`fluksio app`) runs. Read once from the environment by
 * readControlPlaneSettings and passed down; nothing else reads `process.env`. Durations
 * are written like `90s`, `30m`, `6h`; sizes like `512MiB`, `10GiB` or plain bytes.
 */
export type { GitHubAppSettings } from './github-app-settings.js';

export interface ControlPlaneSettings {
  /**
   * Address the HTTP server listens on (`HOST`).
   * @defaultValue '0.0.0.0'
   */
  host: string;
  /**
   * Port the HTTP server listens on (`PORT`); 0 picks a free one.
   * @defaultValue 3000
   */
  port: number;
  /**
   * PostgreSQL to keep runs in (`DATABASE_URL`). Null means an embedded PGlite database
   * under `<dataDir>/database`, for a single node.
   * @defaultValue null
   */
  databaseUrl: string | null;
  /**
   * Where blobs (and the embedded database, without DATABASE_URL) live (`FLUKSIO_DATA_DIR`).
   * @defaultValue `$XDG_DATA_HOME/fluksio`, else `~/.local/share/fluksio`
   */
  dataDir: string;
  /** Redis for BullMQ and the claim doorbell (`REDIS_URL`); required. */
  redisUrl: string;
  /**
   * Prefix of every Redis key and channel the control plane uses (`FLUKSIO_QUEUE_PREFIX`),
   * so several installations (or tests) can share one Redis.
   * @defaultValue 'fluksio'
   */
  queuePrefix: string;
  /**
   * How long a claim's lease lasts without a heartbeat (`FLUKSIO_LEASE_TTL`); a run whose
   * lease ran out is abandoned (and queued again while its retries allow).
   * @defaultValue 90_000
   */
  leaseTtlMs: number;
  /**
   * How often runners are told to heartbeat (`FLUKSIO_HEARTBEAT_INTERVAL`); must be
   * shorter than the lease TTL.
   * @defaultValue 20_000
   */
  heartbeatIntervalMs: number;
  /**
   * How often the sweeper looks for expired leases, runs past their time limit and queued
   * runs past the queue timeout (`FLUKSIO_SWEEP_INTERVAL`).
   * @defaultValue 30_000
   */
  sweepIntervalMs: number;
  /**
   * A runner seen within this window counts as online (`FLUKSIO_ONLINE_WINDOW`): for the
   * `runners online` gauge and for saying what a queued run waits for. Runners long-poll
   * for up to a minute, so it must be longer than that.
   * @defaultValue 120_000
   */
  onlineWindowMs: number;
  /**
   * A run queued longer than this expires, with a reason (`FLUKSIO_QUEUE_TIMEOUT`).
   * @defaultValue 86_400_000 (24 h)
   */
  queueTimeoutMs: number;
  /**
   * How often a waiting claim or a runner's cancel watch looks at Postgres again without a
   * wake-up from Redis (`FLUKSIO_CLAIM_RECHECK`): Redis is only a bell, Postgres the truth.
   * @defaultValue 5_000
   */
  claimRecheckMs: number;
  /**
   * Whether submitted runs may name a `file://` clone URL (`FLUKSIO_ALLOW_FILE_URLS`):
   * for a single machine and for tests, never for a shared control plane.
   * @defaultValue false
   */
  allowFileUrls: boolean;
  /**
   * Hosts an `https://` clone URL may name, `host` or `host:port`, comma-separated
   * (`FLUKSIO_CLONE_HOSTS`).
   * @defaultValue ['github.com']
   */
  cloneHosts: string[];
  /**
   * When set, `GET /metrics` requires `Authorization: Bearer <this>` (`FLUKSIO_METRICS_TOKEN`).
   * @defaultValue null
   */
  metricsToken: string | null;
  /**
   * The largest blob a runner may upload (`FLUKSIO_MAX_BLOB_SIZE`); with S3, at most 5 GiB
   * (one presigned PUT).
   * @defaultValue 10 GiB, or 5 GiB with S3
   */
  maxBlobBytes: number;
  /**
   * The most bytes of one stage's log kept per attempt (`FLUKSIO_MAX_STAGE_LOG`), whatever
   * a runner sends: past it the lines are dropped and one line says so. Runners already
   * stop at the stage's `log_limit` (at most 1 GiB); this holds for an old or a hostile one.
   * Set lower, keep it a little above the largest `log_limit` your pipelines use, for the
   * lines fluksio adds when a stage reaches its limit.
   * @defaultValue 1 GiB + 1 MiB
   */
  maxStageLogBytes: number;
  /**
   * Where blobs are kept (`FLUKSIO_BLOB_STORE`, `FLUKSIO_S3_*`): the data directory, or S3.
   * @defaultValue { kind: 'directory' }
   */
  blobStorage: BlobStorageSettings;
  /**
   * The key that signs the run pages' links in check runs and comments
   * (`FLUKSIO_PAGES_SECRET`, at least 32 characters); unset, it is derived from the GitHub
   * App's private key, and without an App made anew at each start (links then die with
   * the process, and replicas do not share them).
   * @defaultValue null
   */
  pagesSecret: string | null;
  /**
   * How long a signed page link stays valid (`FLUKSIO_PAGE_LINK_TTL`).
   * @defaultValue 30 days
   */
  pageLinkTtlMs: number;
  /**
   * pino log level (`LOG_LEVEL`).
   * @defaultValue 'info'
   */
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * The GitHub App (DESIGN §8), configured when `APP_ID` is set; null runs the control
   * plane without GitHub (the runner and submit APIs only).
   * @defaultValue null
   */
  github: GitHubAppSettings | null;
}

const EnvSettings = z.object({
  HOST: z.string().default('0.0.0.0'),
  PORT: port.default(3000),
  DATABASE_URL: serviceUrl(['postgres:', 'postgresql:']).optional(),
  FLUKSIO_DATA_DIR: z.string().optional(),
  REDIS_URL: serviceUrl(
    ['redis:', 'rediss:'],
    'is required (the control plane keeps its queues in Redis), e.g. redis://127.0.0.1:6379',
  ),
  FLUKSIO_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, {
      error: (issue) => `"${String(issue.input)}" is not a key prefix (letters, digits, "_", "." and "-")`,
    })
    .default('fluksio'),
  FLUKSIO_LEASE_TTL: duration.default(90_000),
  FLUKSIO_HEARTBEAT_INTERVAL: duration.default(20_000),
  FLUKSIO_SWEEP_INTERVAL: duration.default(30_000),
  FLUKSIO_ONLINE_WINDOW: duration.default(120_000),
  FLUKSIO_QUEUE_TIMEOUT: duration.default(86_400_000),
  FLUKSIO_CLAIM_RECHECK: duration.default(5_000),
  FLUKSIO_ALLOW_FILE_URLS: flag.default(false),
  FLUKSIO_CLONE_HOSTS: hostList.default(['github.com']),
  FLUKSIO_METRICS_TOKEN: z.string().optional(),
  FLUKSIO_MAX_BLOB_SIZE: size.optional(),
  // The largest log_limit, and room for the lines a runner adds when a stage reaches it.
  FLUKSIO_MAX_STAGE_LOG: size.default(MAX_LOG_LIMIT + 2 ** 20),
  FLUKSIO_BLOB_STORE: z
    .enum(['directory', 's3'], {
      error: (issue) => `"${String(issue.input)}" is not a blob store (one of directory, s3)`,
    })
    .default('directory'),
  FLUKSIO_S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
      error: (issue) =>
        `"${String(issue.input)}" is not a bucket name (3 to 63 lower-case letters, digits, "." and "-")`,
    })
    .optional(),
  FLUKSIO_S3_REGION: z
    .string()
    .regex(/^[a-z0-9-]+$/, { error: (issue) => `"${String(issue.input)}" is not a region (e.g. eu-west-1)` })
    .optional(),
  AWS_REGION: z.string().optional(),
  FLUKSIO_S3_ENDPOINT: serviceUrl(['https:', 'http:']).optional(),
  FLUKSIO_S3_FORCE_PATH_STYLE: flag.default(false),
  FLUKSIO_S3_URL_TTL: duration
    .refine((ms) => ms >= 1000 && ms <= 7 * 86_400_000, {
      error: 'must be between 1s and 7d (the longest a presigned URL lasts)',
    })
    .default(900_000),
  FLUKSIO_S3_VERIFY_CHECKSUMS: flag.default(true),
  AWS_ACCESS_KEY_ID: z.string().optional(),
  AWS_SECRET_ACCESS_KEY: z.string().optional(),
  AWS_SESSION_TOKEN: z.string().optional(),
  FLUKSIO_PAGES_SECRET: z.string().min(32, { error: 'must be at least 32 characters' }).optional(),
  FLUKSIO_PAGE_LINK_TTL: duration.default(30 * 86_400_000),
  APP_ID: z
    .string()
    .regex(/^\d{1,15}$/, { error: (issue) => `"${String(issue.input)}" is not a GitHub App id (a number)` })
    .transform(Number)
    .optional(),
  PRIVATE_KEY: z.string().optional(),
  PRIVATE_KEY_PATH: z.string().optional(),
  WEBHOOK_SECRET: z.string().optional(),
  GITHUB_API_URL: serviceUrl(['https:', 'http:']).default('https://api.github.com'),
  FLUKSIO_ALLOWED_OWNERS: z
    .string()
    .transform((text) =>
      text
        .split(',')
        .map((owner) => owner.trim().toLowerCase())
        .filter((owner) => owner !== ''),
    )
    .pipe(
      z.array(
        z
          .string()
          .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(:\d{1,15})?$/, {
            error: (issue) =>
              `"${String(issue.input)}" is not a GitHub account name, or one pinned to its account id (write e.g. acme:1234567,octocat)`,
          })
          .transform((owner): AllowedOwner => {
            const [login, id] = owner.split(':') as [string, string?];
            return id === undefined ? { login } : { login, id: Number(id) };
          }),
      ),
    )
    .optional(),
  FLUKSIO_PUBLIC_URL: serviceUrl(['https:', 'http:']).optional(),
  GITHUB_CLIENT_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, {
      error: "is not an OAuth client id (copy the App's Client ID, e.g. Iv23li…)",
    })
    .optional(),
  GITHUB_CLIENT_SECRET: z.string().min(20, { error: 'must be at least 20 characters' }).optional(),
  FLUKSIO_GITHUB_TIMEOUT: duration
    .refine((ms) => ms <= 600_000, { error: 'must be at most 10m' })
    .default(30_000),
  FLUKSIO_CHECK_NAME: z
    .string()
    .max(100, { error: 'must be at most 100 characters' })
    .regex(/^[^\s(][^()]*$/, {
      error: (issue) => `"${String(issue.input)}" is not a check name (no parentheses; e.g. fluksio)`,
    })
    .default('fluksio'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: (issue) =>
        `"${String(issue.input)}" is not a log level (one of fatal, error, warn, info, debug, trace, silent)`,
    })
    .default('info'),
});

/**
 * Reads the control plane's settings from `env` (the process's environment unless a test
 * passes its own). An empty variable counts as unset. Every problem is found at once and
 * thrown as one InvalidSettingsError, each naming its variable:
 * `FLUKSIO_LEASE_TTL: "x" is not a duration (write e.g. 90s, 30m or 6h)`.
 */
export function readControlPlaneSettings(
  env: Readonly<Record<string, string | undefined>> = process.env,
): ControlPlaneSettings {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = EnvSettings.safeParse(present);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`);
  const heartbeat = duration.safeParse(present.FLUKSIO_HEARTBEAT_INTERVAL ?? '20s');
  const leaseTtl = duration.safeParse(present.FLUKSIO_LEASE_TTL ?? '90s');
  if (heartbeat.success && leaseTtl.success && heartbeat.data >= leaseTtl.data) {
    problems.push(
      `FLUKSIO_HEARTBEAT_INTERVAL: must be shorter than FLUKSIO_LEASE_TTL (${leaseTtl.data} ms), or leases expire between two heartbeats`,
    );
  }
  const github = parsed.success ? readGitHubAppSettings(parsed.data, problems) : null;
  const storage = parsed.success ? readStorage(parsed.data, problems) : null;
  if (!parsed.success || !storage || problems.length > 0) throw new InvalidSettingsError(problems);
  const vars = parsed.data;
  return {
    host: vars.HOST,
    port: vars.PORT,
    databaseUrl: vars.DATABASE_URL ?? null,
    dataDir: vars.FLUKSIO_DATA_DIR ?? defaultDataDir(env),
    redisUrl: vars.REDIS_URL,
    queuePrefix: vars.FLUKSIO_QUEUE_PREFIX,
    leaseTtlMs: vars.FLUKSIO_LEASE_TTL,
    heartbeatIntervalMs: vars.FLUKSIO_HEARTBEAT_INTERVAL,
    sweepIntervalMs: vars.FLUKSIO_SWEEP_INTERVAL,
    onlineWindowMs: vars.FLUKSIO_ONLINE_WINDOW,
    queueTimeoutMs: vars.FLUKSIO_QUEUE_TIMEOUT,
    claimRecheckMs: vars.FLUKSIO_CLAIM_RECHECK,
    allowFileUrls: vars.FLUKSIO_ALLOW_FILE_URLS,
    cloneHosts: vars.FLUKSIO_CLONE_HOSTS,
    metricsToken: vars.FLUKSIO_METRICS_TOKEN ?? null,
    maxBlobBytes: storage.maxBlobBytes,
    maxStageLogBytes: vars.FLUKSIO_MAX_STAGE_LOG,
    blobStorage: storage.blobStorage,
    pagesSecret: vars.FLUKSIO_PAGES_SECRET ?? null,
    pageLinkTtlMs: vars.FLUKSIO_PAGE_LINK_TTL,
    logLevel: vars.LOG_LEVEL,
    github,
  };
}

/**
 * Reads only where the database is (`DATABASE_URL`, `FLUKSIO_DATA_DIR`), for commands
 * that need nothing else, such as `fluksio migrate`; problems are thrown as by
 * readControlPlaneSettings.
 */
export function readDatabaseSettings(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Pick<ControlPlaneSettings, 'databaseUrl' | 'dataDir'> {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = EnvSettings.pick({ DATABASE_URL: true, FLUKSIO_DATA_DIR: true }).safeParse(present);
  if (!parsed.success) {
    throw new InvalidSettingsError(
      parsed.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`),
    );
  }
  return {
    databaseUrl: parsed.data.DATABASE_URL ?? null,
    dataDir: parsed.data.FLUKSIO_DATA_DIR ?? defaultDataDir(env),
  };
}

/** The variables of the blob storage (readBlobStoreSettings), a part of EnvSettings. */
const StorageVariables = EnvSettings.pick({
  FLUKSIO_MAX_BLOB_SIZE: true,
  FLUKSIO_BLOB_STORE: true,
  FLUKSIO_S3_BUCKET: true,
  FLUKSIO_S3_REGION: true,
  AWS_REGION: true,
  FLUKSIO_S3_ENDPOINT: true,
  FLUKSIO_S3_FORCE_PATH_STYLE: true,
  FLUKSIO_S3_URL_TTL: true,
  FLUKSIO_S3_VERIFY_CHECKSUMS: true,
  AWS_ACCESS_KEY_ID: true,
  AWS_SECRET_ACCESS_KEY: true,
  AWS_SESSION_TOKEN: true,
});

/**
 * Reads where blobs are kept (`FLUKSIO_DATA_DIR`, `FLUKSIO_BLOB_STORE`, `FLUKSIO_S3_*`),
 * for `fluksio gc --server`; problems are thrown as by readControlPlaneSettings.
 */
export function readBlobStoreSettings(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Pick<ControlPlaneSettings, 'dataDir' | 'blobStorage' | 'maxBlobBytes'> {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const parsed = StorageVariables.safeParse(present);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`);
  const storage = parsed.success ? readStorage(parsed.data, problems) : null;
  if (!storage || problems.length > 0) throw new InvalidSettingsError(problems);
  return { ...storage, dataDir: readDatabaseSettings(env).dataDir };
}

/** The blob storage and its upload limit: S3 takes at most 5 GiB in one presigned PUT. */
function readStorage(
  vars: z.infer<typeof StorageVariables>,
  problems: string[],
): Pick<ControlPlaneSettings, 'blobStorage' | 'maxBlobBytes'> {
  const blobStorage = readBlobStorageSettings(vars, problems);
  const limit = blobStorage.kind === 's3' ? S3_MAX_SINGLE_UPLOAD : Number.MAX_SAFE_INTEGER;
  const maxBlobBytes = vars.FLUKSIO_MAX_BLOB_SIZE ?? Math.min(10 * 2 ** 30, limit);
  if (maxBlobBytes > limit)
    problems.push(
      `FLUKSIO_MAX_BLOB_SIZE: ${maxBlobBytes} bytes is more than one presigned S3 upload takes (5GiB); write at most 5GiB`,
    );
  return { blobStorage, maxBlobBytes };
}

function defaultDataDir(env: Readonly<Record<string, string | undefined>>): string {
  if (env.XDG_DATA_HOME) return join(env.XDG_DATA_HOME, 'fluksio');
  return join(env.HOME || homedir(), '.local', 'share', 'fluksio');
}

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnFluksio, type FluksioProcess } from './fluksio-process.js';

/** The Redis every test uses, each with a key prefix of its own. */
export const TEST_REDIS_URL = process.env.FLUKSIO_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Intervals short enough for tests: leases expire in seconds, sweeps run every second. */
export const FAST_SETTINGS = {
  FLUKSIO_LEASE_TTL: '3s',
  FLUKSIO_HEARTBEAT_INTERVAL: '500ms',
  FLUKSIO_SWEEP_INTERVAL: '1s',
  FLUKSIO_ONLINE_WINDOW: '4s',
  FLUKSIO_CLAIM_RECHECK: '200ms',
  FLUKSIO_ALLOW_FILE_URLS: 'true',
};

/** A `fluksio app` process and where it listens. */
export interface AppProcess {
  url: string;
  process: FluksioProcess;
  /** The environment it was started with, to start it again the same way. */
  env: Record<string, string>;
  dataDir: string;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * Starts `fluksio app` as a real process on a free port over `databaseUrl`, with a Redis
 * prefix and a data directory of its own, and resolves once it listens.
 */
export async function startApp(options: {
  databaseUrl: string;
  env?: Record<string, string>;
  port?: number;
  prefix?: string;
  dataDir?: string;
  /** Arguments after `app`, e.g. `['--role', 'worker']`. */
  args?: string[];
}): Promise<AppProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'fluksio-app-data-')));
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    REDIS_URL: TEST_REDIS_URL,
    FLUKSIO_QUEUE_PREFIX: options.prefix ?? `fluksio-test-${randomBytes(4).toString('hex')}`,
    FLUKSIO_DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    ...FAST_SETTINGS,
    ...options.env,
    ...(options.port === undefined ? {} : { PORT: String(options.port) }),
  };
  const process = spawnFluksio(['app', ...(options.args ?? [])], { cwd: dataDir, env });
  const line = await process.waitFor(/listening on http/, 60_000);
  const url = /listening on (http\S+)/.exec(line)?.[1] ?? '';
  return { url, process, env, dataDir, stop: (signal = 'SIGTERM') => process.stop(signal) };
}

/** Starts `fluksio runner` as a real process against `url`, with its token in the environment. */
export async function startRunnerProcess(options: {
  url: string;
  token: string;
  workDir?: string;
  args?: string[];
  env?: Record<string, string>;
}): Promise<FluksioProcess & { workDir: string }> {
  const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), 'fluksio-runner-work-')));
  const runner = spawnFluksio(['runner', '--work-dir', workDir, ...(options.args ?? [])], {
    cwd: workDir,
    env: { FLUKSIO_URL: options.url, FLUKSIO_RUNNER_TOKEN: options.token, ...options.env },
  });
  return Object.assign(runner, { workDir });
}

/** Removes a directory a test made. */
export function removeDir(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}

import { readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { pino } from 'pino';
import { redactUrl } from '../../client/redact-url.js';
import { startRunnerDaemon } from '../../runner/daemon/runner-daemon.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { userCacheDir } from '../../local/user-cache-dir.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { slurmUnstartableGraceMs } from './slurm-unstartable-grace.js';
import { logDestination } from '../render/log-destination.js';

export interface RunnerCommandOptions {
  /** `--work-dir`: mirrors, checkouts and blob cache (default: the user cache's `runner/`). */
  workDir?: string;
  /** `--concurrency`: runs at once. */
  concurrency?: string;
  /** `--accept-forks`: execute fork pull requests' runs (sandboxed, without the secrets). */
  acceptForks?: boolean;
  /** `--sandbox`: every run's stages in bubblewrap, not only fork runs'. */
  sandbox?: boolean;
  /** `--stage-user`: every stage as this dedicated user, kept from the runner's files by permissions. */
  stageUser?: string;
  /** `--backend`: plain (stages here, the default) or slurm (each a Slurm job). */
  backend?: string;
  /** `--jobs`: stages of one run at once. */
  jobs?: string;
  /** `--slurm-unstartable-grace`: how long a Slurm job may pend for a reason that never clears. */
  slurmUnstartableGrace?: string;
  /** `--env-file`: the runner's secrets, as dotenv `NAME=value` lines. */
  envFile?: string;
  /** `--token-file`: a file holding the runner token (else FLUKSIO_RUNNER_TOKEN). */
  tokenFile?: string;
  /** `--url`: the control plane (else FLUKSIO_URL). */
  url?: string;
}

/** Log fields that could hold a credential, censored even if one ever reaches a log call. */
const REDACTED = [
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'extraHeader',
  '*.extraHeader',
];

/**
 * `fluksio runner`: the self-hosted runner daemon (DESIGN §6, §9). Reads its
 * configuration once, here: the URL from `--url` or FLUKSIO_URL, the token from
 * `--token-file` or FLUKSIO_RUNNER_TOKEN — never from a flag's value, which every user
 * of the machine can read in the process list — and secrets from `--env-file`. Runs
 * until SIGTERM or SIGINT, which cancel the running stages and release their runs to
 * the queue. Exit 0 after a stop, 1 when the control plane refuses the token or speaks
 * another protocol (the message says which side to upgrade), 2 for missing or bad
 * configuration.
 */
export async function runnerCommand(options: RunnerCommandOptions, io: CliIo): Promise<number> {
  const url = options.url ?? io.env.FLUKSIO_URL;
  if (!url) throw new UsageError('No control plane URL: give --url URL or set FLUKSIO_URL');
  if (!/^https?:\/\/[^\s/@]+(\/[^\s@]*)?$/.test(url)) {
    throw new UsageError(
      `--url: "${redactUrl(url)}" is not an http(s) URL without credentials (e.g. https://fluksio.example.com)`,
    );
  }
  const token = await readToken(options.tokenFile, io);
  const concurrency = Number(options.concurrency ?? '1');
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw new UsageError(`--concurrency: "${options.concurrency}" is not a whole number from 1 to 64`);
  }
  const backend = options.backend ?? 'plain';
  if (backend !== 'plain' && backend !== 'slurm') {
    throw new UsageError(`--backend: "${options.backend}" is not plain or slurm`);
  }
  // Jobs wait in Slurm's queue, not here: a run's independent stages are submitted at once.
  const jobs = Number(options.jobs ?? (backend === 'slurm' ? '8' : '1'));
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 256) {
    throw new UsageError(`--jobs: "${options.jobs}" is not a whole number from 1 to 256`);
  }
  const unstartableGraceMs = slurmUnstartableGraceMs(options.slurmUnstartableGrace, backend === 'slurm');
  const workDir = options.workDir ? resolve(io.cwd, options.workDir) : join(userCacheDir(io.env), 'runner');
  // Made when missing; anything else there would fail later as a bare "EEXIST: mkdir".
  const found = await stat(workDir).catch(() => null);
  if (found && !found.isDirectory()) {
    throw new UsageError(`--work-dir: ${workDir} is a file, not a folder: name a folder (made when missing)`);
  }
  const secrets = options.envFile ? await readSecrets(resolve(io.cwd, options.envFile)) : {};
  const hiddenPaths = [options.tokenFile, options.envFile].flatMap((file) =>
    file ? [resolve(io.cwd, file)] : [],
  );
  // Children inherit the process environment; the token is kept in memory only.
  if (io.env === process.env) delete process.env.FLUKSIO_RUNNER_TOKEN;

  const logger = pino(
    { name: 'fluksio-runner', redact: { paths: REDACTED, censor: '***' } },
    logDestination(io),
  );
  const daemon = await startRunnerDaemon({
    url,
    token,
    workDir,
    concurrency,
    jobs,
    backend,
    ...(unstartableGraceMs !== undefined ? { slurmUnstartableGraceMs: unstartableGraceMs } : {}),
    acceptForks: options.acceptForks ?? false,
    sandbox: options.sandbox ?? false,
    ...(options.stageUser !== undefined ? { stageUser: options.stageUser } : {}),
    hiddenPaths,
    secrets,
    environment: io.env,
    logger,
  });
  const stop = () => {
    logger.info('stopping: cancelling running stages and releasing their runs');
    void daemon.stop();
  };
  io.signal?.addEventListener('abort', stop, { once: true });
  if (io.signal?.aborted) stop();
  try {
    await daemon.done;
    return 0;
  } finally {
    io.signal?.removeEventListener('abort', stop);
  }
}

async function readToken(tokenFile: string | undefined, io: CliIo): Promise<string> {
  if (tokenFile) {
    const text = await readFile(resolve(io.cwd, tokenFile), 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`--token-file: cannot read ${tokenFile} (${error.code ?? error.message})`);
    });
    const token = text.trim();
    if (!token || /\s/.test(token)) {
      throw new UsageError(`--token-file: ${tokenFile} must hold the runner token alone on one line`);
    }
    return token;
  }
  const token = io.env.FLUKSIO_RUNNER_TOKEN?.trim();
  if (!token) {
    throw new UsageError(
      'No runner token: set FLUKSIO_RUNNER_TOKEN or give --token-file FILE (never the token itself on the command line)',
    );
  }
  return token;
}

/** The `--env-file` secrets: dotenv syntax; FLUKSIO_* names are the runner's own and refused. */
async function readSecrets(file: string): Promise<Record<string, string>> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`--env-file: cannot read ${file} (${error.code ?? error.message})`);
  });
  const secrets = parseDotenv(text);
  const reserved = Object.keys(secrets).filter((name) => /^FLUKSIO_/i.test(name));
  if (reserved.length > 0) {
    throw new UsageError(
      `--env-file: ${reserved.join(', ')} in ${file}: FLUKSIO_* names are reserved for fluksio itself`,
    );
  }
  const invalid = Object.keys(secrets).filter((name) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
  if (invalid.length > 0) {
    throw new UsageError(`--env-file: ${invalid.join(', ')} in ${file} are not environment variable names`);
  }
  return secrets;
}

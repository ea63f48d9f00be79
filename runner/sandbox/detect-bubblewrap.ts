import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { BubblewrapLauncher } from './bubblewrap-launcher.js';
import type { StageUser } from './stage-user.js';

const run = promisify(execFile);

/** A bubblewrap that was found and that ran a trial sandbox here. */
export interface Bubblewrap {
  /** The executable, absolute. */
  path: string;
  /** As `bwrap --version` says it: `bubblewrap 0.8.0`. */
  version: string;
}

/** Either a working bubblewrap, or the sentence saying why there is none. */
export type BubblewrapDetection = { bubblewrap: Bubblewrap } | { bubblewrap: null; reason: string };

/** Longer than this, a trial of `/bin/true` is broken, not slow. */
const TRIAL_TIMEOUT_MS = 30_000;

/**
 * Looks for `bwrap` on the given PATH, asks its version, and runs `/bin/true` in the
 * sandbox the stages would get: a kernel without unprivileged user namespaces, or a
 * container that forbids them, fails here, once, rather than in every stage. With a
 * stage user the trial runs as that user, as the stages' sandboxes will.
 */
export async function detectBubblewrap(
  environment: Readonly<Record<string, string | undefined>>,
  user: StageUser | null = null,
): Promise<BubblewrapDetection> {
  const bwrap = findExecutable('bwrap', environment.PATH ?? '');
  if (!bwrap) {
    return { bubblewrap: null, reason: 'bwrap is not on the PATH (install Debian\'s "bubblewrap" package)' };
  }
  const env = { PATH: environment.PATH ?? '' };
  try {
    const { stdout } = await run(bwrap, ['--version'], { env, timeout: TRIAL_TIMEOUT_MS });
    const trial = new BubblewrapLauncher({ bwrap, writable: [], readOnly: [], hidden: [] }).launch(
      'exit 0',
      '/',
    );
    await run(trial.file, trial.args, {
      env,
      timeout: TRIAL_TIMEOUT_MS,
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    });
    return { bubblewrap: { path: bwrap, version: stdout.trim() || 'bubblewrap' } };
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    return {
      bubblewrap: null,
      reason: `${bwrap} cannot run a sandbox here${user ? ` as ${user.name}` : ''}: ${stderr || (error as Error).message}`,
    };
  }
}

function findExecutable(name: string, searchPath: string): string | null {
  for (const dir of searchPath.split(':')) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

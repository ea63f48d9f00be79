import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sha256Hex } from '../../core/canonical-json.js';
import { directLauncher, type StageLauncher } from '../sandbox/stage-launcher.js';

const run = promisify(execFile);

/** A fingerprint command that takes longer than this is broken, not slow. */
const FINGERPRINT_TIMEOUT_MS = 120_000;

/**
 * Runs the pipeline's `fingerprint` command (e.g. `pip freeze`) once per run and returns
 * the sha256 of its output, which enters every stage's cache key (DESIGN §5). It runs
 * with the stages' environment in the pipeline's directory, started as the stages are
 * (it is the pipeline author's code too, so a sandbox holds it as well). A failing command throws
 * with its stderr: a run must not pretend to know an environment it could not read.
 */
export async function fingerprintOf(
  command: string,
  cwd: string,
  env: Record<string, string>,
  launcher: StageLauncher = directLauncher,
): Promise<string> {
  const launch = launcher.launch(command, cwd);
  try {
    const { stdout } = await run(launch.file, launch.args, {
      cwd,
      env,
      timeout: FINGERPRINT_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
      encoding: 'buffer',
      ...launch.user,
    });
    return sha256Hex(stdout);
  } catch (error) {
    const stderr =
      (error as { stderr?: Buffer }).stderr?.toString().trim().split('\n').slice(-3).join(' ') ?? '';
    throw new Error(`The fingerprint command \`${command}\` failed${stderr ? `: ${stderr}` : ''}`, {
      cause: error,
    });
  } finally {
    launcher.ended?.();
  }
}

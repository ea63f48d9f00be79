import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { jobFieldsOf } from '../../runner/sandbox/slurm-usage.js';

const run = promisify(execFile);

/** `scontrol show job -o ID` as a field → value map (finished jobs stay known for MinJobAge). */
export async function jobFields(id: string): Promise<Record<string, string>> {
  const { stdout } = await run('scontrol', ['show', 'job', '-o', id]);
  return jobFieldsOf(stdout);
}

/** Whether `squeue` still lists the job as pending, running or completing. */
export async function inQueue(id: string): Promise<boolean> {
  const { stdout } = await run('squeue', ['-h', '-j', id, '-t', 'PD,R,CG,CF,S', '-o', '%i']).catch(() => ({
    stdout: '',
  }));
  return stdout.trim() !== '';
}

/** Polls until `check` holds, failing with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((wake) => setTimeout(wake, 100));
  }
}

/** The first line of a file, or '' while it does not exist yet. */
export async function firstLine(file: string): Promise<string> {
  return (await readFile(file, 'utf8').catch(() => '')).split('\n')[0]?.trim() ?? '';
}

/** Starts the single-node Slurm when it is not running (scripts/start-slurm.sh is idempotent). */
export async function startSlurm(): Promise<void> {
  await run('bash', ['scripts/start-slurm.sh']);
}

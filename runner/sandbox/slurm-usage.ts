import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { StageUsage } from '../../schemas/stage-usage.js';
import { isFinalSlurmRecord } from './slurm-exit-causes.js';

const run = promisify(execFile);

/** How readSlurmUsage asks. */
export interface SlurmUsageOptions {
  /**
   * How long the accounting is asked again while it has no final record of the job:
   * slurmctld sends a job's end to slurmdbd after the job ended, so `sacct` may show it
   * RUNNING, without its end, or not at all for a moment (longer when slurmdbd is busy).
   * Past it, the job's allocation is read instead.
   * @defaultValue 10000
   */
  accountingWaitMs?: number;
  /** Once aborted (the run cancelled), the accounting is asked once, without waiting. */
  signal?: AbortSignal;
  /**
   * The GPUs the job was submitted with (`--gpus`): what it was allocated when the
   * accounting does not track `gres/gpu` (AccountingStorageTRES without it), whose
   * AllocTRES then lists no GPUs at all.
   * @defaultValue 0
   */
  submittedGpus?: number;
  /**
   * The environment sacct and scontrol run with.
   * @defaultValue process.env
   */
  env?: NodeJS.ProcessEnv;
}

/**
 * What a finished Slurm job used (schemas/stage-usage.ts): from `sacct` once the cluster's
 * accounting recorded the job's end, else from `scontrol show job` — its allocated CPUs
 * and GPUs times its run time, which Slurm keeps for a finished job for MinJobAge. Null
 * when Slurm knows the job no longer (or never ran it). A cluster without accounting
 * (sacct fails: "accounting storage is disabled", slurmdbd down, no sacct) is not waited
 * for; one whose record of the job is not final yet is, for `accountingWaitMs`.
 */
export async function readSlurmUsage(
  job: string,
  options: SlurmUsageOptions = {},
): Promise<StageUsage | null> {
  const deadline = Date.now() + (options.accountingWaitMs ?? 10_000);
  const env = options.env ?? process.env;
  for (;;) {
    const accounted = await run('sacct', ['-n', '-P', '-X', '-j', job, '-o', SACCT_USAGE_FIELDS], { env })
      .then(({ stdout }) => usageFromSacct(job, stdout, options.submittedGpus ?? 0))
      .catch(() => 'no accounting' as const);
    if (accounted === 'no accounting') break;
    if (accounted) return accounted;
    if (options.signal?.aborted || Date.now() >= deadline) break;
    await sleep(250);
  }
  const shown = await run('scontrol', ['show', 'job', '-o', '-d', job], { env }).catch(() => null);
  return shown ? usageFromJobFields(job, jobFieldsOf(shown.stdout)) : null;
}

/** The `sacct -o` fields usageFromSacct reads. */
const SACCT_USAGE_FIELDS = 'State,End,AllocTRES,ElapsedRaw,CPUTimeRAW';

/**
 * The usage in `sacct -n -P -X -o State,End,AllocTRES,ElapsedRaw,CPUTimeRAW` output:
 * CPU-seconds as accounted, GPU-seconds as the GPUs allocated (`gres/gpu=2`,
 * `gres/gpu:a100=2`) times the elapsed seconds. An AllocTRES with no `gres/gpu` entry at
 * all is a cluster that does not account GPUs: the job had the `submittedGpus` it asked
 * for (`--gpus` is all or nothing). Null unless the record is final (isFinalSlurmRecord),
 * with its figures, and its allocation once it ran.
 */
export function usageFromSacct(job: string, output: string, submittedGpus = 0): StageUsage | null {
  const line = output.split('\n').find((each) => each.trim() !== '');
  if (!line) return null;
  const [state = '', end = '', tres = '', elapsed = '', cpuTime = ''] = line.trim().split('|');
  if (!isFinalSlurmRecord(state, end)) return null;
  if (!/^\d+$/.test(elapsed) || !/^\d+$/.test(cpuTime)) return null;
  const elapsedSeconds = Number(elapsed);
  if (tres === '' && elapsedSeconds > 0) return null;
  const gpus = /(?:^|,)gres\/gpu[=:]/.test(tres) ? gpusInTres(tres) : submittedGpus;
  return { job, cpuSeconds: Number(cpuTime), gpuSeconds: gpus * elapsedSeconds, source: 'sacct' };
}

/**
 * The usage of a job from its `scontrol show job -o -d` fields: allocated CPUs
 * (`NumCPUs`) and GPUs (`TRES` when the cluster tracks `gres/gpu`, else the job's
 * allocated `JOB_GRES`, else what it asked for: `TresPerJob`, `TresPerNode` × nodes) times
 * its `RunTime`. Null for a job that never started.
 */
export function usageFromJobFields(job: string, fields: Readonly<Record<string, string>>): StageUsage | null {
  const seconds = durationSeconds(fields.RunTime ?? '');
  const cpus = Number(fields.NumCPUs);
  if (seconds === null || !Number.isFinite(cpus)) return null;
  const perNode = gresGpus(fields.TresPerNode ?? '') * (Number(fields.NumNodes) || 1);
  const gpus =
    gpusInTres(fields.TRES ?? '') ||
    gresGpus(fields.JOB_GRES ?? '') ||
    gresGpus(fields.TresPerJob ?? '') ||
    perNode;
  return { job, cpuSeconds: cpus * seconds, gpuSeconds: gpus * seconds, source: 'allocation' };
}

/** `scontrol show job -o` output as a field → value map. */
export function jobFieldsOf(output: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const pair of output.trim().split(/\s+/)) {
    const at = pair.indexOf('=');
    if (at > 0) fields[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return fields;
}

/** GPUs in a TRES list: `cpu=2,gres/gpu=1`, `gres/gpu:a100=2` (typed and untyped both listed count once). */
function gpusInTres(tres: string): number {
  const entries = tres.split(',').map((entry) => entry.split('='));
  const untyped = entries.find(([name]) => name === 'gres/gpu');
  if (untyped) return Number(untyped[1]) || 0;
  return entries
    .filter(([name]) => name?.startsWith('gres/gpu:'))
    .reduce((sum, [, count]) => sum + (Number(count) || 0), 0);
}

/** GPUs in a GRES list: `gpu:2`, `gres:gpu:2`, `gres/gpu:2`, `gpu:a100:2(IDX:0-1)`. */
function gresGpus(gres: string): number {
  return gres
    .split(',')
    .map((entry) => /^(?:gres[:/])?gpu(?::[^:(]+)?:(\d+)/.exec(entry)?.[1])
    .reduce((sum, count) => sum + (Number(count) || 0), 0);
}

/** Seconds in Slurm's `[D-]HH:MM:SS` (or `MM:SS`); null for anything else. */
function durationSeconds(text: string): number | null {
  const match = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(text);
  if (!match) return null;
  const [, days = '0', hours = '0', minutes = '0', seconds = '0'] = match;
  return ((Number(days) * 24 + Number(hours)) * 60 + Number(minutes)) * 60 + Number(seconds);
}

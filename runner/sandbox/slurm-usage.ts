import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { StageUsage } from '../../schemas/stage-usage.js';

const run = promisify(execFile);

/**
 * What a finished Slurm job used (schemas/stage-usage.ts): from `sacct` where the cluster
 * keeps accounting, else from `scontrol show job` — its allocated CPUs and GPUs times its
 * run time, which Slurm keeps for a finished job for MinJobAge. Null when Slurm knows the
 * job no longer (or never ran it).
 */
export async function readSlurmUsage(job: string): Promise<StageUsage | null> {
  const accounted = await run('sacct', ['-n', '-P', '-X', '-j', job, '-o', 'AllocTRES,ElapsedRaw,CPUTimeRAW'])
    .then(({ stdout }) => usageFromSacct(job, stdout))
    // "Slurm accounting storage is disabled" (exit 1), or no sacct at all.
    .catch(() => null);
  if (accounted) return accounted;
  const shown = await run('scontrol', ['show', 'job', '-o', '-d', job]).catch(() => null);
  return shown ? usageFromJobFields(job, jobFieldsOf(shown.stdout)) : null;
}

/**
 * The usage in `sacct -n -P -X -o AllocTRES,ElapsedRaw,CPUTimeRAW` output: CPU-seconds
 * as accounted, GPU-seconds as the GPUs allocated (`gres/gpu=2`, `gres/gpu:a100=2`) times
 * the elapsed seconds. Null for output without a job line.
 */
export function usageFromSacct(job: string, output: string): StageUsage | null {
  const line = output.split('\n').find((each) => each.trim() !== '');
  if (!line) return null;
  const [tres = '', elapsed = '', cpuTime = ''] = line.trim().split('|');
  const elapsedSeconds = Number(elapsed);
  const cpuSeconds = Number(cpuTime);
  if (!/^\d+$/.test(elapsed) || !/^\d+$/.test(cpuTime)) return null;
  return { job, cpuSeconds, gpuSeconds: gpusInTres(tres) * elapsedSeconds, source: 'sacct' };
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

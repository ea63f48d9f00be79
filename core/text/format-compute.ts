import type { StageUsage } from '../../schemas/stage-usage.js';

/** Hours at a precision that stays readable from a few seconds to a sweep's weeks: `0.00083`, `1.25`, `312.5`. */
export function formatHours(seconds: number): string {
  const hours = seconds / 3600;
  if (hours === 0) return '0';
  if (hours >= 100) return hours.toFixed(1);
  if (hours >= 0.01) return hours.toFixed(2);
  return String(Number(hours.toPrecision(2)));
}

/** `0.0011 CPU-hours, 0.00056 GPU-hours`: what a run or a stage's job used. */
export function formatCompute({
  cpuSeconds,
  gpuSeconds,
}: {
  cpuSeconds: number;
  gpuSeconds: number;
}): string {
  return `${formatHours(cpuSeconds)} CPU-hours, ${formatHours(gpuSeconds)} GPU-hours`;
}

/**
 * Where usage figures come from, in words, for whoever wonders how exact they are. The
 * allocation is read where the accounting had no final record of the job: a cluster
 * without accounting, slurmdbd down, or its record late.
 */
export function describeUsageSource(source: StageUsage['source']): string {
  return source === 'sacct'
    ? "from the cluster's accounting (sacct)"
    : "allocated CPUs and GPUs × elapsed time (no final record in the cluster's accounting)";
}

/** `Slurm job 123: 0.0011 CPU-hours, 0 GPU-hours (…)`: a stage's job and what it used. */
export function describeStageUsage(usage: StageUsage): string {
  return `Slurm job ${usage.job}: ${formatCompute(usage)} (${describeUsageSource(usage.source)})`;
}

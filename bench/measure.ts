import { spawnSync, type SpawnSyncOptions } from 'node:child_process';

/** Wall time of a command run to completion, in milliseconds; throws when it fails. */
export function timeCommand(command: string, args: string[], options: SpawnSyncOptions = {}): number {
  const started = performance.now();
  const result = spawnSync(command, args, { stdio: 'pipe', ...options });
  const elapsed = performance.now() - started;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr?.toString()}`);
  }
  return elapsed;
}

/** Median of a list of numbers. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** A percentile (0–100) of a list of numbers, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Times `fn` `times` times and returns every duration in milliseconds. */
export async function repeat(times: number, fn: () => unknown): Promise<number[]> {
  const durations: number[] = [];
  for (let i = 0; i < times; i += 1) {
    const started = performance.now();
    await fn();
    durations.push(performance.now() - started);
  }
  return durations;
}

/** `123 ms`, `1.23 s`. */
export function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

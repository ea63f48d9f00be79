import { Duration } from '../../schemas/duration.js';
import { UsageError } from '../../present/terminal/usage-error.js';

/**
 * `--slurm-unstartable-grace DURATION` (`fluksio runner`, `fluksio run`): how long a Slurm
 * job may pend for a reason that never clears before it is cancelled and its stage fails,
 * in milliseconds; undefined when not given (the launcher's default, 2 minutes). Only with
 * the slurm backend.
 */
export function slurmUnstartableGraceMs(text: string | undefined, slurm: boolean): number | undefined {
  if (text === undefined) return undefined;
  if (!slurm) throw new UsageError('--slurm-unstartable-grace: only with --backend slurm');
  const grace = Duration.safeParse(text);
  if (!grace.success) {
    throw new UsageError(
      `--slurm-unstartable-grace: "${text}" is not a duration: expected one like "90s", "2m" or "1h"`,
    );
  }
  return grace.data;
}

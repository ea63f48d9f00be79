import { formatTimeLimit } from '../../core/text/format-time-limit.js';

/**
 * Slurm's pending reasons that never clear by themselves (a POSIX extended regular
 * expression, read by the attach script's `[[ =~ ]]` and by isUnstartableSlurmReason alike):
 * the job asks for more than its partition allows (PartitionConfig, PartitionTimeLimit,
 * PartitionNodeLimit, MaxMemPerLimit), names what it may not use (BadConstraints,
 * InvalidAccount, InvalidQOS, AccountNotAllowed, QOSNotAllowed), waits on a dependency or
 * reservation that is gone, exceeds a per-job or per-node limit of its association or QOS
 * (`AssocMaxWallDurationPerJobLimit`, `QOSMaxGRESPerNode`) or falls short of a QOS minimum
 * (`QOSMinGRES`). `ReqNodeNotAvail` counts only when it names no unavailable node: nodes
 * down, drained or reserved for maintenance come back.
 *
 * Every other reason is transient: Resources, Priority, Dependency, BeginTime, a hold,
 * and the limits that other jobs' ends lift (`AssocMaxJobsLimit`, `QOSMaxJobsPerUserLimit`,
 * `AssocGrpCpuLimit`), or an administrator's state of things (PartitionDown, NodeDown).
 */
export const UNSTARTABLE_REASON_PATTERN =
  '^(PartitionConfig|PartitionTimeLimit|PartitionNodeLimit|MaxMemPerLimit|BadConstraints|' +
  'InvalidAccount|InvalidQOS|AccountNotAllowed|QOSNotAllowed|DependencyNeverSatisfied|' +
  'ReservationDeleted|ReservationInvalid|(Assoc|QOS)Max[A-Za-z]*Per(Job|Node)(Limit)?|QOSMin[A-Za-z]*|' +
  'ReqNodeNotAvail(,[ _]UnavailableNodes:)?)$';

const UNSTARTABLE_REASON = new RegExp(UNSTARTABLE_REASON_PATTERN);

/** Whether a job pending for `reason` (as squeue says it) will never start: UNSTARTABLE_REASON_PATTERN. */
export function isUnstartableSlurmReason(reason: string): boolean {
  return UNSTARTABLE_REASON.test(reason.trim());
}

/** The fields of `scontrol show job` the attach script reports for a job it gave up on. */
export const UNSTARTABLE_JOB_FIELDS = [
  'Partition',
  'TimeLimit',
  'NumNodes',
  'NumCPUs',
  'MinMemoryNode',
  'MinMemoryCPU',
  'TRES',
  'Account',
  'QOS',
] as const;

/** The fields of `scontrol show partition` it reports for the job's partition. */
export const UNSTARTABLE_PARTITION_FIELDS = [
  'MaxTime',
  'MinNodes',
  'MaxNodes',
  'TotalNodes',
  'MaxCPUsPerNode',
  'TotalCPUs',
  'MaxMemPerNode',
  'MaxMemPerCPU',
  'TRES',
] as const;

/**
 * A job the attach process cancelled because it could never start: Slurm's reason (its
 * first word, `ReqNodeNotAvail` of `ReqNodeNotAvail, UnavailableNodes:`) and what
 * `scontrol` said of the job and of its partition, as far as it could be asked
 * (UNSTARTABLE_JOB_FIELDS, UNSTARTABLE_PARTITION_FIELDS; any may be missing).
 */
export interface Unstartable {
  reason: string;
  job: Readonly<Record<string, string>>;
  partition: Readonly<Record<string, string>>;
}

/** The exit code of an attach process that cancelled its job as unstartable. */
export const UNSTARTABLE_EXIT_CODE = 218;

/**
 * The stage's error for a job that could never start: its reason, and which of its
 * partition's limits it exceeds where scontrol's fields tell (`asks for time 4h, partition
 * debug's MaxTime is 1h`).
 */
export function describeUnstartable(
  job: string | null,
  { reason, job: asked, partition }: Unstartable,
): string {
  const name = asked.Partition ?? 'its partition';
  const exceeded = exceededLimits(asked, partition, `partition ${name}'s`);
  const detail = exceeded.length > 0 ? `: ${exceeded.join('; ')}` : whatItNames(reason, asked);
  return `Slurm would never start ${job === null ? 'the job' : `job ${job}`} (pending: ${reason}), so it was cancelled${detail}`;
}

/** For a reason about the account or QOS, which it names; '' otherwise. */
function whatItNames(reason: string, asked: Readonly<Record<string, string>>): string {
  if (/Account/.test(reason) && asked.Account) return `: it runs as account ${asked.Account}`;
  if (/QOS/.test(reason) && asked.QOS) return `: it runs with QOS ${asked.QOS}`;
  return '';
}

/** Each limit of the partition that the job's request exceeds, in words. */
function exceededLimits(
  asked: Readonly<Record<string, string>>,
  limits: Readonly<Record<string, string>>,
  owner: string,
): string[] {
  const found: string[] = [];
  const time = slurmMinutesMs(asked.TimeLimit);
  const maxTime = slurmMinutesMs(limits.MaxTime);
  if (time !== null && maxTime !== null && time > maxTime) {
    found.push(`asks for time ${formatTimeLimit(time)}, ${owner} MaxTime is ${formatTimeLimit(maxTime)}`);
  }
  const nodes = count(asked.NumNodes);
  const over = (what: string, wanted: number | null, limit: number | null, label: string) => {
    if (wanted !== null && limit !== null && wanted > limit) {
      found.push(`asks for ${wanted} ${what}, ${owner} ${label} is ${limit}`);
    }
  };
  over('nodes', nodes, count(limits.MaxNodes), 'MaxNodes');
  over('nodes', nodes, count(limits.TotalNodes), 'TotalNodes');
  const minNodes = count(limits.MinNodes);
  if (nodes !== null && minNodes !== null && nodes < minNodes) {
    found.push(`asks for ${nodes} nodes, ${owner} MinNodes is ${minNodes}`);
  }
  const cpus = count(asked.NumCPUs);
  over('CPUs', cpus, count(limits.TotalCPUs), 'TotalCPUs');
  const perNode = cpus !== null && nodes !== null && nodes > 0 ? Math.ceil(cpus / nodes) : null;
  over('CPUs per node', perNode, count(limits.MaxCPUsPerNode), 'MaxCPUsPerNode');
  const memNode = megabytes(asked.MinMemoryNode);
  const maxMemNode = megabytes(limits.MaxMemPerNode);
  if (memNode !== null && maxMemNode !== null && memNode > maxMemNode) {
    found.push(`asks for ${memNode}M of memory per node, ${owner} MaxMemPerNode is ${maxMemNode}M`);
  }
  const memCpu = megabytes(asked.MinMemoryCPU);
  const maxMemCpu = megabytes(limits.MaxMemPerCPU);
  if (memCpu !== null && maxMemCpu !== null && memCpu > maxMemCpu) {
    found.push(`asks for ${memCpu}M of memory per CPU, ${owner} MaxMemPerCPU is ${maxMemCpu}M`);
  }
  // A partition whose TRES lists no GPUs has none.
  const gpus = limits.TRES === undefined ? null : (tresCount(limits.TRES, 'gres/gpu') ?? 0);
  over('GPUs', tresCount(asked.TRES, 'gres/gpu'), gpus, 'TRES gres/gpu');
  return found;
}

/** A count scontrol prints (`2`); null for UNLIMITED, N/A or nothing. */
function count(value: string | undefined): number | null {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : null;
}

/** One kind of a TRES list (`cpu=2,mem=4000M,gres/gpu=2`); null when it is not listed. */
function tresCount(tres: string | undefined, kind: string): number | null {
  const entry = tres?.split(',').find((each) => each.startsWith(`${kind}=`));
  return entry === undefined ? null : count(entry.slice(kind.length + 1));
}

const MB_PER_UNIT: Readonly<Record<string, number>> = { K: 1 / 1024, M: 1, G: 1024, T: 1024 * 1024 };

/** A memory size scontrol prints (`200M`, `4G`, `100` in MB); null for UNLIMITED, 0 (none asked) or nothing. */
function megabytes(value: string | undefined): number | null {
  const match = /^(\d+(?:\.\d+)?)([KMGT]?)$/.exec(value ?? '');
  if (!match) return null;
  const mb = Number(match[1]) * (MB_PER_UNIT[match[2] || 'M'] ?? 1);
  return mb > 0 ? Math.ceil(mb) : null;
}

/** A time scontrol prints (`[D-]HH:MM:SS`, `MM:SS`, `M`) in milliseconds; null for UNLIMITED, NONE or nothing. */
export function slurmMinutesMs(value: string | undefined): number | null {
  const match = /^(?:(\d+)-)?(?:(?:(\d+):)?(\d+):)?(\d+)$/.exec(value ?? '');
  if (!match) return null;
  const [, days, hours, minutes, last] = match;
  // Slurm's `M` alone is minutes; with colons the last part is seconds.
  if (days === undefined && minutes === undefined) return Number(last) * 60_000;
  const seconds =
    Number(days ?? 0) * 86_400 + Number(hours ?? 0) * 3_600 + Number(minutes ?? 0) * 60 + Number(last);
  return seconds * 1_000;
}

import { expect, test } from 'vitest';
import { parseJobStatusLine } from '../../runner/sandbox/job-status-line.js';
import { slurmExitCause } from '../../runner/sandbox/slurm-exit-causes.js';
import {
  describeUnstartable,
  isUnstartableSlurmReason,
  slurmMinutesMs,
} from '../../runner/sandbox/slurm-unstartable.js';

test.each([
  'PartitionConfig',
  'PartitionTimeLimit',
  'PartitionNodeLimit',
  'MaxMemPerLimit',
  'BadConstraints',
  'InvalidAccount',
  'InvalidQOS',
  'AccountNotAllowed',
  'QOSNotAllowed',
  'DependencyNeverSatisfied',
  'ReservationDeleted',
  'AssocMaxWallDurationPerJobLimit',
  'AssocMaxCpuPerJobLimit',
  'AssocMaxGRESPerJob',
  'QOSMaxWallDurationPerJobLimit',
  'QOSMaxGRESPerNode',
  'QOSMaxMemoryPerJob',
  'QOSMinGRES',
  'QOSMinCpuNotSatisfied',
  'ReqNodeNotAvail',
  'ReqNodeNotAvail, UnavailableNodes:',
])('%s never clears', (reason) => {
  expect(isUnstartableSlurmReason(reason)).toBe(true);
});

test.each([
  'Resources',
  'Priority',
  'Dependency',
  'BeginTime',
  'JobHeldUser',
  'JobHeldAdmin',
  'Licenses',
  'Reservation',
  'PartitionDown',
  'PartitionInactive',
  'NodeDown',
  'Cleaning',
  // Limits that other jobs' ends lift.
  'AssocMaxJobsLimit',
  'QOSMaxJobsPerUserLimit',
  'QOSMaxCpuPerUserLimit',
  'AssocGrpCpuLimit',
  'QOSGrpGRES',
  // Nodes down, drained or reserved come back.
  'ReqNodeNotAvail, UnavailableNodes:vm',
  'ReqNodeNotAvail, Reserved for maintenance',
  'None',
  '',
  'PartitionTimeLimitX',
])('"%s" is transient', (reason) => {
  expect(isUnstartableSlurmReason(reason)).toBe(false);
});

test.each([
  { text: '00:01:00', ms: 60_000 },
  { text: '04:00:00', ms: 4 * 3_600_000 },
  { text: '1-02:00:00', ms: 26 * 3_600_000 },
  { text: '1:30', ms: 90_000 },
  { text: '30', ms: 30 * 60_000 },
  { text: 'UNLIMITED', ms: null },
  { text: 'NONE', ms: null },
])('Slurm time $text is $ms ms', ({ text, ms }) => {
  expect(slurmMinutesMs(text)).toBe(ms);
});

const partition = {
  MaxTime: '01:00:00',
  MinNodes: '0',
  MaxNodes: '1',
  TotalNodes: '1',
  MaxCPUsPerNode: 'UNLIMITED',
  TotalCPUs: '2',
  MaxMemPerNode: '100',
  MaxMemPerCPU: 'UNLIMITED',
  TRES: 'cpu=2,mem=4000M,node=1,billing=2,gres/gpu=2',
};
const job = {
  Partition: 'debug',
  TimeLimit: '00:30:00',
  NumNodes: '1',
  NumCPUs: '1',
  MinMemoryNode: '0',
  TRES: 'cpu=1,node=1',
  Account: 'ml',
  QOS: 'normal',
};

test.each([
  {
    case: 'a time above MaxTime',
    reason: 'PartitionTimeLimit',
    asked: { TimeLimit: '04:00:00' },
    says: ": asks for time 4h, partition debug's MaxTime is 1h",
  },
  {
    case: 'more nodes and CPUs than the partition has',
    reason: 'PartitionConfig',
    asked: { NumNodes: '2', NumCPUs: '4' },
    says: ": asks for 2 nodes, partition debug's MaxNodes is 1; asks for 2 nodes, partition debug's TotalNodes is 1; asks for 4 CPUs, partition debug's TotalCPUs is 2",
  },
  {
    case: 'more memory per node than MaxMemPerNode',
    reason: 'MaxMemPerLimit',
    asked: { MinMemoryNode: '200M' },
    says: ": asks for 200M of memory per node, partition debug's MaxMemPerNode is 100M",
  },
  {
    case: 'more GPUs than the partition has',
    reason: 'PartitionConfig',
    asked: { TRES: 'cpu=1,node=1,gres/gpu=3' },
    says: ": asks for 3 GPUs, partition debug's TRES gres/gpu is 2",
  },
  { case: 'an account it may not use', reason: 'InvalidAccount', asked: {}, says: ': it runs as account ml' },
  { case: 'no limit scontrol tells', reason: 'BadConstraints', asked: {}, says: '' },
])('the error names $case', ({ reason, asked, says }) => {
  expect(describeUnstartable('12', { reason, job: { ...job, ...asked }, partition })).toBe(
    `Slurm would never start job 12 (pending: ${reason}), so it was cancelled${says}`,
  );
});

test('the attach process’s report of an unstartable job is the stage’s error', () => {
  const status = parseJobStatusLine(
    'unstartable 12 PartitionTimeLimit job.Partition=debug job.TimeLimit=04:00:00 partition.MaxTime=01:00:00',
  );
  expect(status).toEqual({
    job: '12',
    pending: null,
    unstartable: {
      reason: 'PartitionTimeLimit',
      job: { Partition: 'debug', TimeLimit: '04:00:00' },
      partition: { MaxTime: '01:00:00' },
    },
  });
  expect(slurmExitCause({ job: '12', endedBy: null, unstartable: status?.unstartable ?? null })).toBe(
    "Slurm would never start job 12 (pending: PartitionTimeLimit), so it was cancelled: asks for time 4h, partition debug's MaxTime is 1h",
  );
  expect(parseJobStatusLine('unstartable 12')).toBeNull();
  expect(parseJobStatusLine('unstartable abc PartitionConfig')).toBeNull();
  expect(parseJobStatusLine('unstartable 12 PartitionConfig TimeLimit=1')).toBeNull();
});

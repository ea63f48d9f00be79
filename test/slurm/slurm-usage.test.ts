import { expect, test } from 'vitest';
import { formatCompute, formatHours } from '../../core/text/format-compute.js';
import { jobFieldsOf, usageFromJobFields, usageFromSacct } from '../../runner/sandbox/slurm-usage.js';

test.each([
  ['billing=2,cpu=2,gres/gpu=1,mem=4000M,node=1|3600|7200\n', { cpuSeconds: 7200, gpuSeconds: 3600 }],
  ['cpu=8,gres/gpu:a100=2,gres/gpu=2,node=1|10|80\n', { cpuSeconds: 80, gpuSeconds: 20 }],
  ['cpu=4,gres/gpu:a100=1,gres/gpu:v100=2|100|400', { cpuSeconds: 400, gpuSeconds: 300 }],
  ['cpu=1,node=1|5|5', { cpuSeconds: 5, gpuSeconds: 0 }],
])('sacct %j: CPUTimeRAW, and GPUs × ElapsedRaw', (output, expected) => {
  expect(usageFromSacct('42', output)).toEqual({ job: '42', source: 'sacct', ...expected });
});

test.each(['', '\n', '|Unknown|'])('sacct without a usable job line (%j) gives no usage', (output) => {
  expect(usageFromSacct('42', output)).toBeNull();
});

test.each([
  ['RunTime=00:00:02 NumCPUs=2 TRES=cpu=2,node=1,billing=2 JOB_GRES=gpu:1', 4, 2],
  ['RunTime=1-00:00:00 NumCPUs=1 TRES=cpu=1,gres/gpu=2 JOB_GRES=gpu:1', 86_400, 172_800],
  ['RunTime=01:00 NumCPUs=4 TRES=cpu=4 JOB_GRES=(null) TresPerJob=gres:gpu:3', 240, 180],
  ['RunTime=00:00:10 NumCPUs=1 TRES=cpu=1 JOB_GRES=gpu:a100:2(IDX:0-1)', 10, 20],
  ['RunTime=00:00:10 NumCPUs=2 NumNodes=2 TRES=cpu=2 TresPerNode=gres/gpu:1', 20, 20],
  ['RunTime=00:00:07 NumCPUs=3 TRES=cpu=3,node=1', 21, 0],
])('scontrol %j: allocated CPUs and GPUs × RunTime', (line, cpuSeconds, gpuSeconds) => {
  expect(usageFromJobFields('7', jobFieldsOf(line))).toEqual({
    job: '7',
    source: 'allocation',
    cpuSeconds,
    gpuSeconds,
  });
});

test('a job Slurm never ran has no usage', () => {
  expect(usageFromJobFields('7', jobFieldsOf('JobState=PENDING RunTime=INVALID NumCPUs=1'))).toBeNull();
});

test.each([
  [0, '0'],
  [3, '0.00083'],
  [36, '0.01'],
  [5400, '1.50'],
  [1_000_000, '277.8'],
])('%d s is %s hours', (seconds, text) => {
  expect(formatHours(seconds)).toBe(text);
});

test('a run’s compute reads as CPU- and GPU-hours', () => {
  expect(formatCompute({ cpuSeconds: 7200, gpuSeconds: 3600 })).toBe('2.00 CPU-hours, 1.00 GPU-hours');
});

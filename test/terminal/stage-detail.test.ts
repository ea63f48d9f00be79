import { expect, test } from 'vitest';
import { stageDetail } from '../../present/terminal/progress-printer.js';

const stage = {
  status: 'ran' as const,
  cachedFrom: null,
  reasons: ['train.py changed', 'lr 0.01 → 0.1'],
  error: null,
  pending: null,
};

test.each([
  { case: 'a stage that ran says why', stage, detail: 'train.py changed; lr 0.01 → 0.1' },
  {
    case: 'a cached stage says where from',
    stage: { ...stage, status: 'cached' as const, cachedFrom: '01JNBASE000000000000000001' },
    detail: 'from run 01JNBASE00',
  },
  {
    case: 'a failed stage says why it failed',
    stage: {
      ...stage,
      status: 'failed' as const,
      error: 'Slurm ended the job: TIMEOUT (it ran past its time limit)',
    },
    detail: 'Slurm ended the job: TIMEOUT (it ran past its time limit)',
  },
  {
    case: 'a running stage whose Slurm job waits says why, with the job id (fluksio show)',
    stage: { ...stage, status: 'running' as const, pending: { job: '12', reason: 'Priority' } },
    detail: 'pending: Priority (Slurm job 12)',
  },
  {
    case: 'a running stage whose job runs says why it ran',
    stage: { ...stage, status: 'running' as const },
    detail: 'train.py changed; lr 0.01 → 0.1',
  },
])('$case', ({ stage: shown, detail }) => {
  expect(stageDetail(shown)).toBe(detail);
});

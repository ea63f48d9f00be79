import { expect, test } from 'vitest';
import { RunEvent } from '../../schemas/run-event.js';
import { emptyStageRecord } from '../../schemas/stage-record.js';

/** A finish event as runners sent it before stages could wait in a Slurm queue. */
const { pending: _pending, ...olderRecord } = { ...emptyStageRecord('train', 'ran'), startedAt: null };

test.each([
  {
    case: "an older runner's finish event, without `pending`, reads as waiting for nothing",
    event: { type: 'stage.finished', seq: 3, stage: olderRecord },
    read: { stage: { pending: null } },
  },
  {
    case: 'a job waiting in the queue',
    event: { type: 'stage.pending', seq: 4, stage: 'train', pending: { job: '12', reason: 'Resources' } },
    read: { pending: { job: '12', reason: 'Resources' } },
  },
  {
    case: 'a job no longer waiting',
    event: { type: 'stage.pending', seq: 5, stage: 'train', pending: null },
    read: { pending: null },
  },
])('$case', ({ event, read }) => {
  expect(RunEvent.parse(event)).toMatchObject(read);
});

test.each([
  { case: 'a job id that is no Slurm id', pending: { job: '12; rm -rf /', reason: 'Resources' } },
  { case: 'an empty reason', pending: { job: '12', reason: '' } },
  { case: 'a field too many', pending: { job: '12', reason: 'Resources', node: 'vm' } },
])('a pending event with $case is refused', ({ pending }) => {
  expect(RunEvent.safeParse({ type: 'stage.pending', seq: 1, stage: 'train', pending }).success).toBe(false);
});

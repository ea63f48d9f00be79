import { expect, test } from 'vitest';
import { parseJobStatusLine } from '../../runner/sandbox/job-status-line.js';

test.each([
  { line: 'job 4242', status: { job: '4242', pending: null } },
  { line: 'job 4242_7', status: { job: '4242_7', pending: null } },
  { line: 'pending 4242 Resources', status: { job: '4242', pending: { job: '4242', reason: 'Resources' } } },
  {
    line: 'pending 4242 ReqNodeNotAvail, UnavailableNodes:vm',
    status: { job: '4242', pending: { job: '4242', reason: 'ReqNodeNotAvail, UnavailableNodes:vm' } },
  },
  { line: 'ended 4242 TIMEOUT', status: { job: '4242', pending: null, endedBy: 'TIMEOUT' } },
  { line: 'ended 4242 REQUEUED', status: { job: '4242', pending: null, endedBy: 'REQUEUED' } },
  {
    line: 'refused invalid partition specified: nope; Batch job submission failed: Invalid partition name specified',
    status: {
      job: null,
      pending: null,
      refused:
        'invalid partition specified: nope; Batch job submission failed: Invalid partition name specified',
    },
  },
  { line: `refused ${'x'.repeat(600)}`, status: { job: null, pending: null, refused: 'x'.repeat(500) } },
  { line: 'refused', status: null },
  { line: 'refused   ', status: null },
  { line: 'ended 4242', status: null },
  { line: 'ended 4242 timeout', status: null },
  { line: 'ended 4242 TIMEOUT extra', status: null },
  { line: 'ended abc TIMEOUT', status: null },
  { line: 'pending 4242', status: null },
  { line: `pending 4242 ${'x'.repeat(201)}`, status: null },
  { line: 'pending abc Resources', status: null },
  { line: 'job', status: null },
  { line: 'job 4242 extra', status: null },
  { line: 'running 4242', status: null },
  { line: '', status: null },
])('"$line" → $status', ({ line, status }) => {
  expect(parseJobStatusLine(line)).toEqual(status);
});

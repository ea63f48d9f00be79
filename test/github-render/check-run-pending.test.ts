import { expect, test } from 'vitest';
import { makeInput, makeRun, makeStage, renderFixture } from './fixtures.js';

test('a running stage whose Slurm job waits says why, with the job id, on its row and in the details', () => {
  const run = makeRun({ status: 'running', finishedAt: null, durationMs: null, metrics: {} });
  const waiting = makeStage({
    name: 'train',
    status: 'running',
    reasons: ['train.py changed'],
    pending: { job: '4242', reason: 'ReqNodeNotAvail, UnavailableNodes:gpu_07' },
  });
  const { summary, text } = renderFixture(makeInput({ run, stages: [waiting] }));
  expect(summary).toMatch(
    /^\| train \| .* \| ⏳ pending: ReqNodeNotAvail, UnavailableNodes:gpu\\_07 \(Slurm job 4242\) \|$/m,
  );
  expect(text).toContain('- pending: ReqNodeNotAvail, UnavailableNodes:gpu\\_07 (Slurm job 4242)');
  // Once the job runs, the row says why the stage ran again.
  const { summary: running } = renderFixture(makeInput({ run, stages: [{ ...waiting, pending: null }] }));
  expect(running).toMatch(/^\| train \| .* \| train\.py changed \|$/m);
  expect(running).not.toContain('pending:');
});

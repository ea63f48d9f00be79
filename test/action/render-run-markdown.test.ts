import { expect, test } from 'vitest';
import { actionResult } from '../../action/action-result.js';
import { checkRunTitle, renderRunMarkdown } from '../../action/render-run-markdown.js';
import type { RunReport } from '../../schemas/run-report.js';

function report(overrides: Partial<RunReport['run']> = {}, rest: Partial<RunReport> = {}): RunReport {
  return {
    run: {
      id: '01J0000000000000000000000A',
      pipelinePath: 'fluksio.yml',
      commit: 'a'.repeat(40),
      dirty: false,
      dirtyReasons: [],
      codeDigest: 'sha256:' + 'c'.repeat(64),
      paramsDigest: 'd'.repeat(64),
      envDigest: 'e'.repeat(64),
      params: { lr: 0.1 },
      status: 'succeeded',
      reason: null,
      groupId: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:00:02.000Z',
      durationMs: 2000,
      ...overrides,
    },
    stages: [],
    metrics: { loss: 0.25 },
    baseline: null,
    diff: [{ name: 'loss', baseline: null, value: 0.25, delta: null, deltaPct: null, better: null }],
    annotations: [],
    ...rest,
  };
}

test('stage text cannot break the tables or close the code block it is quoted in', () => {
  const failed = report(
    { status: 'failed', reason: 'Stage train failed: exited with code 1: ValueError: a | b' },
    {
      stages: [
        {
          name: 'train',
          status: 'failed',
          cacheKey: null,
          cachedFrom: null,
          reasons: ['lr 0.01 → 0.1'],
          notes: [],
          durationMs: 10,
          exitCode: 1,
          error: 'exited with code 1: ValueError: a | b\n<script>',
          outs: [],
          dirtyReasons: [],
          warnings: [],
        },
      ],
    },
  );
  const markdown = renderRunMarkdown({
    report: failed,
    series: {},
    commitNote: null,
    noBaselineNote: 'none here.',
    failures: [{ stage: 'train', tail: 'printing ```\n| not a row |', traceback: null }],
  });
  expect(markdown).toContain(
    '| train | ✗ failed | 0.01s | exited with code 1: ValueError: a \\| b &lt;script> |',
  );
  expect(markdown).toContain('````text\nprinting ```\n| not a row |\n````');
  expect(markdown).toContain('No baseline: none here.');
});

test('the outputs of a sweep: the group, the first status that is not success, metrics by run, and a failure per failed run', () => {
  const group = 'gha-1-1-abcdef';
  const ok = report({ id: 'A', groupId: group, params: { lr: 0.1 } });
  const bad = report(
    {
      id: 'B',
      groupId: group,
      params: { lr: 0.2 },
      status: 'failed',
      reason: 'Stage train failed: exited with code 1',
    },
    { metrics: {} },
  );
  const result = actionResult([ok, bad], group, 'summary');
  expect(result.outputs).toEqual({
    'run-id': group,
    status: 'failed',
    metrics: JSON.stringify({ A: { loss: 0.25 }, B: {} }),
    summary: 'summary',
    runs: JSON.stringify([
      { id: 'A', status: 'succeeded', params: { lr: 0.1 }, metrics: { loss: 0.25 }, reason: null },
      {
        id: 'B',
        status: 'failed',
        params: { lr: 0.2 },
        metrics: {},
        reason: 'Stage train failed: exited with code 1',
      },
    ]),
  });
  expect(result.failure).toBe('Run B (lr=0.2) failed: Stage train failed: exited with code 1');
  expect(checkRunTitle(ok)).toBe('✅ succeeded · loss 0.25');
});

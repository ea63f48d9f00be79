import { expect, test } from 'vitest';
import { actionResult } from '../../action/action-result.js';
import { reportView, type ReportViewInput } from '../../action/report-view.js';
import { runStepSummary } from '../../action/step-summary.js';
import type { WorkflowContext } from '../../action/workflow-context.js';
import { renderCheckRun } from '../../present/github/render-check-run.js';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import type { RunReport } from '../../schemas/run-report.js';

const WORKFLOW: WorkflowContext = {
  workspace: '/work',
  repository: 'octo/ml',
  eventName: 'pull_request',
  sha: 'f'.repeat(40),
  branch: 'feature/lr',
  pullRequest: { number: 7, headSha: 'b'.repeat(40), baseSha: '9'.repeat(40), baseRef: 'main' },
  runId: '42',
  runAttempt: '1',
  job: 'train',
  step: 'fluksio',
  apiUrl: 'https://api.github.com',
  serverUrl: 'https://github.com',
};

/** The step summary of a run, as the action writes it. */
function stepSummaryOf(input: Partial<ReportViewInput> & { report: RunReport | RemoteRunReport }): string {
  const view = reportView({
    workflow: WORKFLOW,
    goals: {},
    series: {},
    logTails: {},
    tracebacks: [],
    noBaseline: 'none here.',
    serverUrl: null,
    ...input,
  });
  return runStepSummary(renderCheckRun(view, { name: 'fluksio' }), view);
}

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
      selection: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      startedAt: '2026-01-01T00:00:00.000Z',
      finishedAt: '2026-01-01T00:00:02.000Z',
      durationMs: 2000,
      cpuSeconds: null,
      gpuSeconds: null,
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
          cachedFromTeam: false,
          reasons: ['lr 0.01 → 0.1'],
          notes: [],
          durationMs: 10,
          exitCode: 1,
          error: 'exited with code 1: ValueError: a | b\n<script>',
          outs: [],
          dirtyReasons: [],
          warnings: [],
          usage: null,
          pending: null,
        },
      ],
    },
  );
  const markdown = stepSummaryOf({
    report: failed,
    logTails: { train: 'printing ```\n| not a row |' },
  });
  expect(markdown).toContain(
    '| train | ❌ failed | 0.01s | exited with code 1: ValueError: a \\| b \\<script\\> |',
  );
  expect(markdown).toContain('````\nprinting ```\n| not a row |\n````');
  expect(markdown).toContain('No baseline: none here.');
  // The whole log is in the workflow run's log, which a run in the job has no command for.
  expect(markdown).toContain(
    "the whole log: [the workflow run's log](https://github.com/octo/ml/actions/runs/42)",
  );
});

test('a submitted run’s step summary shows the metric diff against its baseline, as the check run does', () => {
  const submitted: RemoteRunReport = {
    ...report(
      { id: '01J000000000000000000000SB' },
      {
        metrics: { loss: 0.25 },
        baseline: { id: '01J000000000000000000000BA', commit: '9'.repeat(40) },
        diff: [{ name: 'loss', baseline: 0.5, value: 0.25, delta: -0.25, deltaPct: -50, better: true }],
      },
    ),
    repository: 'octo/ml',
    attempt: 1,
    labels: ['gpu'],
    runner: 'gpu-box',
    sandbox: null,
  };
  const markdown = stepSummaryOf({
    report: submitted,
    goals: { loss: { goal: 'min' } },
    serverUrl: 'https://fluksio.example',
  });
  expect(markdown).toContain('**Succeeded in 2.00s · loss 0.25 (−0.25 ✅)**');
  expect(markdown).toContain('Against main @ 9999999, run `01J000000000000000000000BA`.');
  expect(markdown).toContain('| loss | 0.5 | **0.25** | −0.25 | −50% | ✅ |');
  expect(markdown).toContain('- **runner** `gpu-box`');
  expect(markdown).toContain(
    'The whole run and its logs: `fluksio show 01J000000000000000000000SB --url https://fluksio.example`',
  );
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
});

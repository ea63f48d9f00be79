import type { Annotation } from '../../schemas/annotation.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import type { Run } from '../../schemas/tables/runs.js';
import { RERUN_BUTTONS } from '../../app/github/render/rerun-buttons.js';
import { runViewFromDetail } from '../../app/run-view-from-detail.js';
import { renderCheckRun, type RenderedCheckRun } from '../../present/github/render-check-run.js';

export const HEAD_SHA = '1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d';

/** A run row as the store returns it; finished and successful unless told otherwise. */
export function makeRun(overrides: Partial<Run> = {}): Run {
  const at = new Date('2026-03-01T12:00:00Z');
  return {
    id: '01JNRUN0000000000000000001',
    repository: 'octo/ml',
    pipelinePath: 'fluksio.yml',
    trustDomain: 'trusted',
    groupId: null,
    groupIndex: null,
    commit: HEAD_SHA,
    dirty: false,
    dirtyReasons: [],
    codeDigest: 'sha256:c0de0000111122223333444455556666777788889999aaaabbbbccccddddeeee',
    params: { lr: 0.1, epochs: 3 },
    paramsDigest: 'sha256:9a9a9a9a9a9a9a9a9a9a',
    envDigest: 'sha256:e0e0e0e0',
    sandbox: null,
    noCache: false,
    selection: null,
    status: 'succeeded',
    statusReason: null,
    labels: ['gpu'],
    triggerKey: null,
    attempt: 1,
    metrics: { accuracy: 0.9, loss: 0.3 },
    createdAt: at,
    startedAt: at,
    finishedAt: new Date(at.getTime() + 245_000),
    durationMs: 245_000,
    cloneUrl: null,
    fetchRef: null,
    fork: false,
    retries: 0,
    leaseExpirations: 0,
    releases: 0,
    timeoutMs: 86_400_000,
    queuedAt: at,
    leaseId: null,
    leaseEpoch: 0,
    leaseExpiresAt: null,
    claimedAt: at,
    runnerName: 'gpu-box',
    cancelRequested: false,
    cancelReason: null,
    cancelAs: null,
    submittedBy: null,
    installationId: 1,
    prNumber: 7,
    trigger: 'comment',
    automatic: false,
    metricGoals: { accuracy: { goal: 'max' }, loss: { goal: 'min' } },
    checkName: 'fluksio',
    baseRef: 'main',
    branch: 'feature',
    baselineCommits: null,
    baselineMergeBase: null,
    baselineLookupFailures: 0,
    baselineRunId: null,
    baselineFixed: false,
    cpuSeconds: null,
    gpuSeconds: null,
    ...overrides,
  };
}

export function makeStage(overrides: Partial<StageRecord> & { name: string }): StageRecord {
  return {
    status: 'ran',
    cacheKey: 'sha256:5eed',
    keyInputs: null,
    cachedFrom: null,
    cachedFromTeam: false,
    reasons: [],
    notes: [],
    startedAt: null,
    finishedAt: null,
    durationMs: 1_500,
    exitCode: 0,
    outs: [],
    metrics: {},
    logTail: '',
    logDigest: null,
    error: null,
    dirtyReasons: [],
    warnings: [],
    usage: null,
    pending: null,
    ...overrides,
  };
}

export function makeAnnotation(overrides: Partial<Annotation> = {}): Annotation {
  return {
    stage: 'train',
    path: 'train.py',
    line: 42,
    level: 'error',
    message: 'ZeroDivisionError: division by zero',
    title: null,
    ...overrides,
  };
}

export const SERVER_URL = 'https://fluksio.example';

/** What the app renders a check run from: the run's rows, its baseline, and its check's name. */
export interface CheckRunFixture {
  run: Run;
  stages: StageRecord[];
  annotations: Annotation[];
  baseline: { run: Run; label: string } | null;
  series: Record<string, { stage: string; points: { step: number; value: number }[] }>;
  /** Tracebacks to show instead of those found in the failed stages' log tails. */
  tracebacks?: { stage: string; text: string }[];
  checkName: string;
}

/** The rows of a successful two-stage run compared with a baseline. */
export function makeInput(overrides: Partial<CheckRunFixture> = {}): CheckRunFixture {
  return {
    run: makeRun(),
    stages: [
      makeStage({ name: 'prepare', status: 'cached', cachedFrom: '01JNBASE000000000000000001', reasons: [] }),
      makeStage({ name: 'train', reasons: ['train.py changed', 'lr 0.01 → 0.1'], durationMs: 240_000 }),
    ],
    annotations: [],
    baseline: {
      run: makeRun({ id: '01JNBASE000000000000000001', metrics: { accuracy: 0.85, loss: 0.25 } }),
      label: 'main @ 9f8e7d6 (merge-base)',
    },
    series: {
      loss: {
        stage: 'train',
        points: [0.9, 0.7, 0.5, 0.4, 0.3].map((value, step) => ({ step, value })),
      },
    },
    checkName: 'fluksio',
    ...overrides,
  };
}

/** The check run the app sends for these rows: the app's view of them, rendered. */
export function renderFixture(input: CheckRunFixture): RenderedCheckRun {
  const view = runViewFromDetail(input, { baseline: input.baseline, serverUrl: SERVER_URL });
  const { tracebacks } = input;
  const stages = tracebacks
    ? view.stages.map((stage) => ({
        ...stage,
        tracebacks: tracebacks.filter((each) => each.stage === stage.name).map((each) => each.text),
      }))
    : view.stages;
  return renderCheckRun({ ...view, stages }, { name: input.checkName, actions: RERUN_BUTTONS });
}

/** Every limit GitHub puts on a check-run create or update body. */
export function expectWithinGitHubLimits(rendered: {
  title: string;
  summary: string;
  text: string;
  actions: { label: string; description: string; identifier: string }[];
}): string[] {
  const broken: string[] = [];
  const bytes = (text: string) => Buffer.byteLength(text, 'utf8');
  if (rendered.title.length > 255) broken.push('title');
  if (bytes(rendered.summary) > 65_535 || rendered.summary.length > 65_535) broken.push('summary');
  if (bytes(rendered.text) > 65_535 || rendered.text.length > 65_535) broken.push('text');
  if (rendered.actions.length > 3) broken.push('actions');
  for (const action of rendered.actions) {
    if (action.label.length > 20) broken.push(`label ${action.label}`);
    if (action.description.length > 40) broken.push(`description ${action.description}`);
    if (action.identifier.length > 20) broken.push(`identifier ${action.identifier}`);
  }
  return broken;
}

/** Lines that open or close a backtick fence: an even count means no block is left open. */
export function fenceLines(markdown: string): number {
  return markdown.split('\n').filter((line) => /^`{3,}/.test(line)).length;
}

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import type { GitHubWork } from '../../app/github/github-work.js';
import { queueGitHubRuns } from '../../app/github/triggers/queue-github-runs.js';
import { inProcessLock } from '../../app/keyed-lock.js';
import type { Annotation } from '../../schemas/annotation.js';
import { validatePipeline } from '../../core/pipeline/validate-pipeline.js';
import { mintInstallationToken } from '../action/helpers/installation-token.js';
import {
  makePullRequestWorkspace,
  type PullRequestWorkspace,
} from '../action/helpers/pull-request-workspace.js';
import { logOf, NODE_RUNTIMES, runStep } from '../action/helpers/run-bundled-action.js';
import type { DoubleCheckRun } from '../github/github-double.js';
import {
  closeOutboxDatabase,
  finished,
  openOutboxDatabase,
  openOutboxWorld,
  waitFor,
  type OutboxWorld,
} from '../outbox/outbox-fixture.js';

/**
 * A sweep over a value long enough that each member's check-run name must be cut to
 * GitHub's 100 characters, whose one stage reports 120 warnings on repository lines:
 * more than one request of GitHub's 50 annotations carries.
 */
const NOTES = ['a'.repeat(120), 'b'.repeat(120)];
const WARNINGS = 120;
const PIPELINE = `version: 1
params:
  note: { type: string, default: none }
stages:
  lint:
    cmd: echo \${note} > lint.txt && for i in $(seq 1 ${WARNINGS}); do echo "::warning file=train.py,line=$i::problem $i"; done
    params: [note]
    outs: [lint.txt]
`;

/** The annotations the stage's warnings become, as a runner reports them to the control plane. */
function stageWarnings(): Annotation[] {
  return Array.from({ length: WARNINGS }, (_, index) => ({
    stage: 'lint',
    path: 'train.py',
    line: index + 1,
    level: 'warning' as const,
    message: `problem ${index + 1}`,
    title: null,
  }));
}

/** The annotations each request that shaped a check run carried, request by request. */
function annotationRequests(checkRun: DoubleCheckRun): unknown[][] {
  return checkRun.history
    .map((change) => (change.body.output as { annotations?: unknown[] } | undefined)?.annotations ?? [])
    .filter((annotations) => annotations.length > 0);
}

let world: OutboxWorld;
let workspace: PullRequestWorkspace;
let cacheDir: string;

beforeAll(openOutboxDatabase);
afterAll(closeOutboxDatabase);
beforeEach(async () => {
  world = await openOutboxWorld();
  workspace = await makePullRequestWorkspace({
    files: { 'fluksio.yml': PIPELINE, 'train.py': 'print("train")\n', '.gitignore': '/lint.txt\n' },
    headFiles: { 'notes.md': 'unused\n' },
  });
  cacheDir = await mkdtemp(join(tmpdir(), 'fluksio-parity-cache-'));
});
afterEach(async () => {
  expect(world.double.violations).toEqual([]);
  await world.close();
  await workspace.cleanup();
  await rm(cacheDir, { recursive: true, force: true });
});

test('the app and the action name, cap and page the same sweep member’s check run identically', async () => {
  // The action: the committed bundle runs the sweep in the job and publishes its check runs.
  await workspace.git('checkout', '-q', '--detach', workspace.base);
  const token = await mintInstallationToken(world.double, world.installationId, { checks: 'write' });
  const step = await runStep('main', {
    node: NODE_RUNTIMES[0]?.path ?? process.execPath,
    workspace: workspace.workspace,
    inputs: { 'github-token': token, params: `note=${NOTES.join(',')}` },
    repository: world.repository,
    eventName: 'push',
    event: workspace.pushEvent(world.repository),
    sha: workspace.base,
    apiUrl: world.double.url,
    env: { FLUKSIO_CACHE_DIR: cacheDir },
  });
  expect(step.code, logOf(step)).toBe(0);
  const actionRuns = (
    JSON.parse(step.outputs.runs ?? '[]') as { id: string; params: { note: string } }[]
  ).map((run) => ({ id: run.id, note: run.params.note }));
  expect(actionRuns.map((run) => run.note)).toEqual(NOTES);

  // The app: the same grid queued as a push delivery queues it, each member finished with
  // the warnings its runner reported, and the outbox sending the check runs.
  const { pipeline, problems } = validatePipeline(PIPELINE, { pipelineDir: '' });
  expect(problems).toEqual([]);
  if (!pipeline) throw new Error('the pipeline did not validate');
  const work: GitHubWork = {
    db: world.db,
    github: {
      appId: world.double.credentials.appId,
      privateKey: world.double.credentials.privateKey,
      webhookSecret: 'unused',
      apiUrl: world.double.url,
      allowedOwners: [],
      pinnedOwners: new Map(),
      checkName: 'fluksio',
      requestTimeoutMs: 30_000,
      publicUrl: 'https://fluksio.example.com',
      signIn: null,
    },
    installationApi: (id) => world.github(id),
    notifications: { notifyRun: async () => {}, notifyNotice: async () => {}, notifyGroup: async () => {} },
    ringDoorbell: async () => {},
    ringRunBell: async () => {},
    onlineWindowMs: 60_000,
    logger: pino({ level: 'silent' }),
    lock: inProcessLock(),
  };
  const appRuns = await queueGitHubRuns(work, {
    deliveryId: 'parity-1',
    installationId: world.installationId,
    repository: {
      owner: world.repository.split('/')[0] ?? '',
      name: world.repository.split('/')[1] ?? '',
      fullName: world.repository,
      cloneUrl: world.double.cloneUrl(world.repository),
    },
    commit: workspace.base,
    pipelinePath: 'fluksio.yml',
    pipeline,
    branch: 'main',
    grid: NOTES.map((note) => ({ note })),
    swept: ['note'],
    noCache: false,
    trigger: 'push',
    automatic: true,
    pullRequest: null,
    requestedBy: 'octocat',
  });
  for (const run of appRuns) {
    await world.updateRun(run.id, { status: 'running', startedAt: new Date() });
    await world.addAnnotations(run.id, stageWarnings());
    await world.updateRun(run.id, finished('succeeded'));
  }
  // Opened once the runs are over, so each check run's first request is its final state.
  const outbox = await world.openOutbox();
  for (const run of appRuns) await outbox.notifyRun(run.id);

  for (const [index, note] of NOTES.entries()) {
    const appRun = appRuns[index];
    const actionRun = actionRuns.find((run) => run.note === note);
    if (!appRun || !actionRun) throw new Error(`no run of note ${note.slice(0, 3)}…`);
    const fromApp = await waitFor(`the app's check run of member ${index}`, () => {
      const [checkRun] = world.checkRunsOf(appRun.id);
      return checkRun?.annotations.length === WARNINGS && checkRun;
    });
    const [fromAction] = world.checkRunsOf(actionRun.id);
    if (!fromAction) throw new Error(`the action made no check run for member ${index}`);

    // The same name, cut to GitHub's 100 characters with the app's comma-separated params.
    expect(fromAction.name).toBe(fromApp.name);
    expect(fromApp.name.length).toBeLessThanOrEqual(100);
    expect(fromApp.name).toMatch(new RegExp(`^fluksio \\(note=${note.slice(0, 10)}\\w*… #[0-9a-f]{8}\\)$`));
    // The same annotations in the same requests: 50, 50 and 20, each the same list.
    const fromAppRequests = annotationRequests(fromApp);
    expect(fromAppRequests.map((annotations) => annotations.length)).toEqual([50, 50, 20]);
    expect(annotationRequests(fromAction)).toEqual(fromAppRequests);
    expect(fromAction.conclusion).toBe(fromApp.conclusion);
  }
  // The two members' names differ only past the cut: the hash tells them apart.
  expect(new Set(appRuns.map((run) => run.checkName)).size).toBe(NOTES.length);
}, 240_000);

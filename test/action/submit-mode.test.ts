import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runs } from '../../schemas/tables/runs.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { startGitHubDouble, type GitHubDouble } from '../github/github-double.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { EXPERIMENT_FILES, FAILING_LINE, HEAD_FILES, REPOSITORY } from './helpers/experiment.js';
import { mintInstallationToken } from './helpers/installation-token.js';
import { makePullRequestWorkspace, type PullRequestWorkspace } from './helpers/pull-request-workspace.js';
import { logOf, NODE_RUNTIMES, runStep, type StepOptions } from './helpers/run-bundled-action.js';

let database: TestDatabase;
let world: ControlPlaneWorld;
let double: GitHubDouble;
let githubToken: string;
/** A pull request whose pipeline any runner takes, and one that waits for a `gpu` runner that never comes. */
let pr: PullRequestWorkspace;
let waitingPr: PullRequestWorkspace;

beforeAll(async () => {
  database = await createTestDatabase();
  world = new ControlPlaneWorld(database.db, database.url);
  await world.start();
  double = await startGitHubDouble();
  const { installationId } = double.addRepository({ owner: 'octo-org', name: 'ml-project' });
  githubToken = await mintInstallationToken(double, installationId, { checks: 'write' });
  pr = await makePullRequestWorkspace({ files: EXPERIMENT_FILES, headFiles: HEAD_FILES });
  waitingPr = await makePullRequestWorkspace({
    files: {
      ...EXPERIMENT_FILES,
      'fluksio.yml': (EXPERIMENT_FILES['fluksio.yml'] ?? '').replace(
        'version: 1\n',
        'version: 1\nruns-on: [gpu]\n',
      ),
    },
    headFiles: HEAD_FILES,
  });
  await world.allow([`local${pr.origin.dir}`, `local${waitingPr.origin.dir}`]);
  await world.runner('cpu-box', { labels: ['cpu'] });
}, 120_000);
afterAll(async () => {
  expect(double.violations).toEqual([]);
  await double.close();
  await pr.cleanup();
  await waitingPr.cleanup();
  await world.close();
  await database.close();
});

/** The step of a `pull_request` workflow that submits to the control plane. */
function submitting(node: string, inputs: Record<string, string>, workspace = pr): StepOptions {
  return {
    node,
    workspace: workspace.workspace,
    inputs: { server: world.app.url, 'server-token': world.apiToken, 'github-token': githubToken, ...inputs },
    repository: REPOSITORY,
    eventName: 'pull_request',
    event: workspace.pullRequestEvent(REPOSITORY),
    sha: workspace.merge,
    apiUrl: double.url,
  };
}

async function runCount(): Promise<number> {
  const [row] = await world.db.select({ n: count() }).from(runs);
  return row?.n ?? 0;
}

describe.each(NODE_RUNTIMES)('submit mode on $name', ({ path: node }) => {
  test('a run submitted and followed: outputs carry its id, status and metrics; it ran the merge commit; the check run is on the head', async () => {
    const step = await runStep('main', submitting(node, {}));
    expect(step.code, logOf(step)).toBe(0);
    const runId = step.outputs['run-id'] ?? '';
    expect(step.outputs.status).toBe('succeeded');
    expect(JSON.parse(step.outputs.metrics ?? '{}')).toEqual({ loss: 0.015625, rows: 3 });
    expect(JSON.parse(step.outputs.runs ?? '[]')).toEqual([
      expect.objectContaining({ id: runId, status: 'succeeded', params: { lr: 0.5, fail: 0 } }),
    ]);
    const report = await world.report(runId);
    expect(report.run.commit).toBe(pr.merge);
    expect(report.runner).toBe('cpu-box');
    // The Idempotency-Key names the workflow run and its attempt.
    expect((await world.row(runId)).triggerKey).toMatch(/^submit:local\/.+:gha-\d+-1-[0-9a-f]{16}-0$/);
    expect(step.summary).toContain(`GitHub's merge of #7`);
    expect(step.stdout).toMatch(/succeeded on cpu-box/);
    expect(double.checkRuns(REPOSITORY).find((check) => check.externalId === runId)).toMatchObject({
      headSha: pr.head,
      conclusion: 'success',
    });
  }, 120_000);

  test('a failing run fails the step with its traceback’s last line', async () => {
    const step = await runStep('main', submitting(node, { params: 'fail=1' }));
    expect(step.code, logOf(step)).toBe(1);
    expect(step.outputs.status).toBe('failed');
    const errors = step.commands.filter((command) => command.name === 'error');
    expect(errors[0]).toMatchObject({
      properties: { file: 'train.py', line: String(FAILING_LINE) },
      value: 'Stage train failed: exited with code 1: ZeroDivisionError: division by zero',
    });
    expect(errors.at(-1)?.value).toMatch(/: ZeroDivisionError: division by zero$/);
    expect(step.summary).toContain('ZeroDivisionError: division by zero');
  }, 120_000);

  test('a sweep queues its grid and fills runs; each run has its own check run', async () => {
    const step = await runStep('main', submitting(node, { params: 'lr=0.25,0.5', 'check-name': 'sweep' }));
    expect(step.code, logOf(step)).toBe(0);
    const all = JSON.parse(step.outputs.runs ?? '[]') as {
      id: string;
      status: string;
      params: { lr: number };
    }[];
    expect(all.map((run) => [run.params.lr, run.status])).toEqual([
      [0.25, 'succeeded'],
      [0.5, 'succeeded'],
    ]);
    expect(step.outputs['run-id']).toMatch(/^gha-/);
    expect((await world.report(all[0]?.id ?? '')).run.groupId).toBe(step.outputs['run-id']);
    const names = double
      .checkRuns(REPOSITORY)
      .filter((check) => all.some((run) => run.id === check.externalId))
      .map((check) => check.name);
    expect(names.sort()).toEqual(['sweep (lr=0.25)', 'sweep (lr=0.5)']);
  }, 120_000);

  test('wait: false returns the queued run at once, and the post step leaves it queued', async () => {
    const step = await runStep('main', submitting(node, { wait: 'false' }, waitingPr));
    expect(step.code, logOf(step)).toBe(0);
    expect(step.outputs.status).toBe('queued');
    const runId = step.outputs['run-id'] ?? '';
    const post = await runStep('post', {
      ...submitting(node, { wait: 'false' }, waitingPr),
      state: step.state,
    });
    expect(post.code, logOf(post)).toBe(0);
    expect((await world.report(runId)).run).toMatchObject({
      status: 'queued',
      reason: 'Waiting for a runner labelled gpu',
    });
    await fetch(`${world.app.url}/api/v1/runs/${runId}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.apiToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
  }, 120_000);

  test('cancelling the workflow cancels the run: the main step on SIGINT, the post step after a kill', async () => {
    const signalled = await runStep('main', {
      ...submitting(node, {}, waitingPr),
      started: (child, output) => whenQueued(output, () => child.kill('SIGINT')),
    });
    expect(signalled.code, logOf(signalled)).toBe(1);
    const [cancelledId] = JSON.parse(signalled.state['submitted-runs'] ?? '[]') as string[];
    expect(signalled.commands.at(-1)?.value).toBe(
      `The workflow was cancelled; cancelled run ${cancelledId} on ${world.app.url}`,
    );
    expect((await world.report(cancelledId ?? '')).run.status).toBe('cancelled');

    const killed = await runStep('main', {
      ...submitting(node, {}, waitingPr),
      started: (child, output) => whenQueued(output, () => child.kill('SIGKILL')),
    });
    const [orphanId] = JSON.parse(killed.state['submitted-runs'] ?? '[]') as string[];
    expect((await world.report(orphanId ?? '')).run.status).toBe('queued');
    const post = await runStep('post', { ...submitting(node, {}, waitingPr), state: killed.state });
    expect(post.code, logOf(post)).toBe(0);
    expect(post.stdout).toContain(`fluksio: cancelled ${orphanId} on ${world.app.url}`);
    expect((await world.report(orphanId ?? '')).run).toMatchObject({
      status: 'cancelled',
      reason: 'The workflow job ended before the run did',
    });
  }, 120_000);
});

test('bad input submits nothing: each problem is a sentence naming its input', async () => {
  const before = await runCount();
  const [runtime] = NODE_RUNTIMES;
  const step = await runStep('main', submitting(runtime?.path ?? process.execPath, { params: 'lr=fast' }));
  expect(step.code, logOf(step)).toBe(1);
  expect(step.commands.filter((command) => command.name === 'error').map((command) => command.value)).toEqual(
    [`Input 'params': Parameter 'lr': "fast" is not a float (e.g. lr=0.5)`],
  );

  const several = await runStep(
    'main',
    submitting(runtime?.path ?? process.execPath, { 'server-token': '', wait: 'maybe', params: 'lr' }),
  );
  expect(several.code).toBe(1);
  expect(several.commands.find((command) => command.name === 'error')?.value.split('\n')).toEqual([
    `Input 'wait': "maybe" is not a boolean (true or false)`,
    `Input 'params': "lr" is not key=value (e.g. lr=0.1)`,
    `Input 'server-token': empty, but 'server' is set; expected an API token that may submit runs (fluksio token add --submit)`,
  ]);
  expect(await runCount()).toBe(before);
}, 120_000);

/** Calls `then` once the step printed that it queued a run (its state is saved by then). */
function whenQueued(output: () => string, then: () => void): void {
  const timer = setInterval(() => {
    if (/^queued \w{26}/m.test(output())) {
      clearInterval(timer);
      then();
    }
  }, 50);
}

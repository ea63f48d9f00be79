import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { runs } from '../../schemas/tables/runs.js';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { startGitHubDouble, type GitHubDouble } from '../github/github-double.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { startControlPlaneRelay } from './helpers/control-plane-relay.js';
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

/** The check runs of these runs, in their order. */
function checkRunsOf(runIds: readonly string[]) {
  const checks = double.checkRuns(REPOSITORY);
  return runIds.flatMap((runId) => checks.filter((check) => check.externalId === runId));
}

/** Each of these runs has its check run, completed as cancelled: none is left in progress. */
function expectCheckRunsCancelled(runIds: readonly string[]): void {
  expect(checkRunsOf(runIds).map((check) => [check.externalId, check.status, check.conclusion])).toEqual(
    runIds.map((runId) => [runId, 'completed', 'cancelled']),
  );
}

/** Cancels a run the test left waiting for a runner, as `fluksio cancel` would. */
async function cancelRun(runId: string): Promise<void> {
  await fetch(`${world.app.url}/api/v1/runs/${runId}/cancel`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world.apiToken}`, 'content-type': 'application/json' },
    body: '{}',
  });
}

async function runCount(): Promise<number> {
  const [row] = await world.db.select({ n: count() }).from(runs);
  return row?.n ?? 0;
}

describe.each(NODE_RUNTIMES)('submit mode on $name', ({ path: node }) => {
  test('a run submitted and followed: outputs carry its id, status and metrics; it ran the merge commit; the check run is on the head', async () => {
    // The push to main that the base branch's workflow submitted: the baseline, on the control plane.
    await pr.git('checkout', '-q', '--detach', pr.base);
    const onMain = await runStep('main', {
      ...submitting(node, {}),
      eventName: 'push',
      event: pr.pushEvent(REPOSITORY),
      sha: pr.base,
      env: { GITHUB_REF_NAME: 'main', GITHUB_REF_TYPE: 'branch' },
    });
    await pr.git('checkout', '-q', '--detach', pr.merge);
    expect(onMain.code, logOf(onMain)).toBe(0);
    const baseRunId = onMain.outputs['run-id'] ?? '';

    // On a pull request, GitHub names the head branch in GITHUB_HEAD_REF; the ref is `7/merge`.
    const step = await runStep('main', {
      ...submitting(node, {}),
      env: { GITHUB_HEAD_REF: 'feature/lr', GITHUB_REF_NAME: '7/merge', GITHUB_REF_TYPE: 'branch' },
    });
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
    // The runs list filters by the branch the action recorded.
    expect([(await world.row(baseRunId)).branch, (await world.row(runId)).branch]).toEqual([
      'main',
      'feature/lr',
    ]);
    expect((await world.row(runId)).triggerKey).toMatch(/^submit:local\/.+:gha-\d+-1-[0-9a-f]{16}-0$/);
    expect(step.summary).toContain(`GitHub's merge of #7`);
    // The metric diff against the base branch's run, as the check run shows it.
    expect(step.summary).toContain(`Against main @ ${pr.base.slice(0, 7)}, run \`${baseRunId}\`.`);
    expect(step.summary).toMatch(/\| loss \| 0\.125 \| \*\*0\.015625\*\* \| −0\.109375 \| −87\.5% \| ✅ \|/);
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
    await cancelRun(runId);
  }, 120_000);

  test('cancelling the workflow cancels the run: the main step on SIGINT, the post step after a kill', async () => {
    const signalled = await runStep('main', {
      ...submitting(node, {}, waitingPr),
      started: (child) => whenLogged(child, FOLLOWING, () => child.kill('SIGINT')),
    });
    expect(signalled.code, logOf(signalled)).toBe(1);
    const [cancelledId = ''] = JSON.parse(signalled.state['submitted-runs'] ?? '[]') as string[];
    expect(signalled.commands.at(-1)?.value).toBe(
      `The workflow was cancelled; cancelled run ${cancelledId} on ${world.app.url}`,
    );
    expect((await world.report(cancelledId)).run.status).toBe('cancelled');
    // The outputs say how the run ended, and its check run (a required check, say) is not left pending.
    expect(signalled.outputs.status).toBe('cancelled');
    expect(JSON.parse(signalled.outputs.runs ?? '[]')).toEqual([
      expect.objectContaining({ id: cancelledId, status: 'cancelled' }),
    ]);
    expectCheckRunsCancelled([cancelledId]);

    const killed = await runStep('main', {
      ...submitting(node, {}, waitingPr),
      started: (child) => whenLogged(child, QUEUED, () => child.kill('SIGKILL')),
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

  test('cancelling a sweep while following it: runs lists every run as cancelled, and each check run is completed', async () => {
    const step = await runStep('main', {
      ...submitting(node, { params: 'lr=0.25,0.5', 'check-name': 'cancelled sweep' }, waitingPr),
      started: (child) => whenLogged(child, FOLLOWING, () => child.kill('SIGINT')),
    });
    expect(step.code, logOf(step)).toBe(1);
    const submitted = JSON.parse(step.state['submitted-runs'] ?? '[]') as string[];
    expect(submitted).toHaveLength(2);
    expect(step.outputs['run-id']).toMatch(/^gha-/);
    expect(step.outputs.status).toBe('cancelled');
    const all = JSON.parse(step.outputs.runs ?? '[]') as { id: string; status: string }[];
    expect(all.map((run) => [run.id, run.status])).toEqual(submitted.map((id) => [id, 'cancelled']));
    expectCheckRunsCancelled(submitted);
  }, 120_000);

  test('cancelling a sweep while it is being submitted submits no more of its grid', async () => {
    const grid = Array.from({ length: 32 }, (_, index) => (index + 1) / 100);
    const step = await runStep('main', {
      ...submitting(node, { params: `lr=${grid.join(',')}` }, waitingPr),
      started: (child) => whenLogged(child, QUEUED, () => child.kill('SIGINT')),
    });
    expect(step.code, logOf(step)).toBe(1);
    const submitted = JSON.parse(step.state['submitted-runs'] ?? '[]') as string[];
    expect(submitted.length).toBeGreaterThan(0);
    expect(submitted.length).toBeLessThan(grid.length);
    const all = JSON.parse(step.outputs.runs ?? '[]') as { id: string; status: string }[];
    expect(all.map((run) => [run.id, run.status])).toEqual(submitted.map((id) => [id, 'cancelled']));
    for (const runId of submitted) expect((await world.report(runId)).run.status).toBe('cancelled');
  }, 120_000);

  test('two legs of a matrix (the same job, step and workflow run) queue a run each', async () => {
    // Every GITHUB_* variable is the same in each leg of a matrix job.
    const runId = String(20_000_000_000 + Math.floor(Math.random() * 1e9));
    const leg = { ...submitting(node, { wait: 'false' }, waitingPr), runId };
    const first = await runStep('main', leg);
    const second = await runStep('main', leg);
    expect(first.code, logOf(first)).toBe(0);
    expect(second.code, logOf(second)).toBe(0);
    const ids = [first.outputs['run-id'] ?? '', second.outputs['run-id'] ?? ''];
    expect(ids[0]).not.toBe(ids[1]);
    const keys = await Promise.all(ids.map(async (runId) => (await world.row(runId)).triggerKey));
    expect(keys[0]).not.toBe(keys[1]);
    for (const runId of ids) await cancelRun(runId);
  }, 120_000);

  test('a main step that fails by itself (the control plane unreachable while following) leaves its run alone in the post step, and completes its check run', async () => {
    const relay = await startControlPlaneRelay(world.app.url);
    const options = submitting(node, {}, waitingPr);
    options.inputs.server = relay.url;
    let runId = '';
    try {
      const step = await runStep('main', {
        ...options,
        started: (child) => whenLogged(child, FOLLOWING, () => (relay.up = false)),
      });
      expect(step.code, logOf(step)).toBe(1);
      expect(step.commands.at(-1)?.value).toMatch(
        /^Could not reach the control plane at http:\/\/127\.0\.0\.1:\d+ \(GET \/api\/v1\/runs\/\w+\): it answered 503: The control plane is unavailable$/,
      );
      [runId = ''] = JSON.parse(step.state['submitted-runs'] ?? '[]') as string[];

      relay.up = true;
      const post = await runStep('post', { ...options, state: step.state });
      expect(post.code, logOf(post)).toBe(0);
      expect(post.stdout).not.toContain('cancelled');
      expect((await world.report(runId)).run.status).toBe('queued');
      // The step could not learn how the run ends: its check run fails (neutral would pass a required check).
      expect(checkRunsOf([runId]).map((check) => [check.status, check.conclusion])).toEqual([
        ['completed', 'failure'],
      ]);
    } finally {
      await relay.close();
      if (runId) await cancelRun(runId);
    }
  }, 120_000);

  test('a server URL with a user name and password: they are not sent, and never printed', async () => {
    const server = new URL(world.app.url);
    server.username = 'deploy';
    server.password = 'hunter2-in-the-url';
    const step = await runStep('main', submitting(node, { server: server.href, wait: 'false' }, waitingPr));
    expect(step.code, logOf(step)).toBe(0);
    for (const text of [step.stdout, step.stderr, step.summary, JSON.stringify(step.outputs)]) {
      expect(text).not.toContain('hunter2-in-the-url');
      expect(text).not.toContain('deploy@');
    }
    expect(step.summary).toContain(`### fluksio: queued on ${world.app.url}`);
    await cancelRun(step.outputs['run-id'] ?? '');
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

/** The step printed that it queued a run (its state is saved by then). */
const QUEUED = /^queued \w{26}/m;
/** The step follows its runs: their check runs are created by then. */
const FOLLOWING = /^\w{10} queued: Waiting for a runner/m;

/** Calls `then` as soon as the step's log matches `pattern`. */
function whenLogged(child: ChildProcess, pattern: RegExp, then: () => void): void {
  let log = '';
  const onData = (chunk: Buffer) => {
    log += chunk.toString();
    if (!pattern.test(log)) return;
    child.stdout?.off('data', onData);
    then();
  };
  child.stdout?.on('data', onData);
}

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { runFluksio, spawnFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

let database: TestDatabase;
let world: ControlPlaneWorld;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await world.close();
});

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.1, min: 0 }
metrics:
  loss: { goal: min }
stages:
  train:
    cmd: echo "::metric name=loss::\${lr}" && mkdir -p model && echo "lr=\${lr}" > model/weights.txt
    params: [lr]
    outs: [model]
`;

test('a laptop submits its pushed HEAD, follows the run to the end, and pulls the outputs; runners and tokens are made with the CLI', async () => {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model/\n' });
  // The repository is its own origin, as a clone of a server repository would be.
  await project.repo.git('remote', 'add', 'origin', project.repo.dir);
  await project.repo.git('fetch', '-q', 'origin');

  const admin = { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: world.app.dataDir };
  const added = spawnFluksio(
    ['runner', 'add', '--name', 'laptop-box', '--owner', 'local', '--labels', 'cpu', '--json'],
    {
      cwd: project.repo.dir,
      env: admin,
    },
  );
  expect(await added.exited, added.output()).toBe(0);
  const runner = JSON.parse(added.output()) as { token: string; labels: string[] };
  expect(runner.labels).toEqual(['cpu']);
  const tokenAdded = spawnFluksio(
    ['token', 'add', '--name', 'laptop', '--repo', project.repository, '--submit', '--json'],
    {
      cwd: project.repo.dir,
      env: admin,
    },
  );
  expect(await tokenAdded.exited, tokenAdded.output()).toBe(0);
  const { token } = JSON.parse(tokenAdded.output()) as { token: string };
  world.apiToken = token;
  world.tokens.push(token, runner.token);

  const { startRunnerProcess } = await import('../helpers/control-plane-processes.js');
  world.runners.push(await startRunnerProcess({ url: world.app.url, token: runner.token }));

  const remote = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: token };
  const submit = spawnFluksio(['submit', 'lr=0.5', '--wait', '--json'], {
    cwd: project.repo.dir,
    env: remote,
  });
  expect(await submit.exited, submit.output()).toBe(0);
  const report = JSON.parse(submit.output().slice(submit.output().indexOf('{'))) as RemoteRunReport;
  expect(report).toMatchObject({
    run: { status: 'succeeded', commit: project.commit, params: { lr: 0.5 } },
    runner: 'laptop-box',
    metrics: { loss: 0.5 },
  });
  // The branch checked out goes along, so the runs list by it (fluksio diff --remote main).
  expect((await world.row(report.run.id)).branch).toBe('main');

  const pull = spawnFluksio(['pull', report.run.id, '--to', 'pulled'], {
    cwd: project.repo.dir,
    env: remote,
  });
  expect(await pull.exited, pull.output()).toBe(0);
  expect(await readFile(join(project.repo.dir, 'pulled', 'model', 'weights.txt'), 'utf8')).toBe('lr=0.5\n');
  // --json says what was pulled: written where nothing was, left alone where the bytes were there.
  for (const [to, written, unchanged] of [
    ['json', ['model/weights.txt'], []],
    ['pulled', [], ['model/weights.txt']],
  ] as const) {
    const json = await runFluksio(['pull', report.run.id.slice(0, 12), '--to', to, '--json'], {
      cwd: project.repo.dir,
      env: remote,
    });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      run: report.run.id,
      to: join(project.repo.dir, to),
      outs: [
        { path: 'model', kind: 'dir', digest: expect.stringMatching(/^sha256:/), size: expect.any(Number) },
      ],
      written,
      unchanged,
    });
  }

  const sweep = spawnFluksio(['submit', 'lr=0.1,0.2', '--json'], { cwd: project.repo.dir, env: remote });
  expect(await sweep.exited, sweep.output()).toBe(0);
  const queued = JSON.parse(sweep.output().slice(sweep.output().indexOf('{'))) as {
    group: string;
    runs: { id: string }[];
  };
  expect(queued.runs).toHaveLength(2);
  for (const { id } of queued.runs) expect((await world.waitFor(id)).run.status).toBe('succeeded');
});

test('submit refuses what a runner could not fetch or run, naming the problem, and queues nothing', async () => {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model/\n' });
  await world.allow([project.repository]);
  const remote = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };

  const noOrigin = spawnFluksio(['submit'], { cwd: project.repo.dir, env: remote });
  expect(await noOrigin.exited).toBe(2);
  expect(noOrigin.output()).toContain('no remote "origin"');

  await project.repo.git('remote', 'add', 'origin', project.repo.dir);
  const unpushed = spawnFluksio(['submit'], { cwd: project.repo.dir, env: remote });
  expect(await unpushed.exited).toBe(2);
  expect(unpushed.output()).toMatch(/is not on origin: push it first/);

  await project.repo.git('fetch', '-q', 'origin');
  const badParam = spawnFluksio(['submit', 'lr=fast'], { cwd: project.repo.dir, env: remote });
  expect(await badParam.exited).toBe(2);
  expect(badParam.output()).toContain(`Parameter 'lr': "fast" is not a float`);

  const noToken = spawnFluksio(['submit'], { cwd: project.repo.dir, env: { FLUKSIO_URL: world.app.url } });
  expect(await noToken.exited).toBe(2);
  expect(noToken.output()).toContain('No API token: set FLUKSIO_TOKEN');

  const { count } = await import('drizzle-orm');
  const { runs } = await import('../../schemas/tables/runs.js');
  const [row] = await world.db.select({ n: count() }).from(runs);
  expect(row?.n).toBe(0);
  expect(existsSync(join(project.repo.dir, '.fluksio'))).toBe(false);
});

test('fluksio show --url shows a run of the control plane: the failed stage, its traceback, its whole log, its report', async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': `version: 1
stages:
  train:
    cmd: python3 train.py
`,
    'train.py': `print("epoch 1")
print("::metric name=loss::0.5")
def step():
    raise ValueError("loss is nan")
step()
`,
  });
  await world.allow([project.repository]);
  await world.runner('cpu-box');
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  expect((await world.waitFor(runId)).run.status).toBe('failed');
  const env = { FLUKSIO_TOKEN: world.apiToken };

  const show = spawnFluksio(['show', runId, '--url', world.app.url], { cwd: project.repo.dir, env });
  expect(await show.exited, show.output()).toBe(0);
  expect(show.output()).toContain('Stage train failed: exited with code 1: ValueError: loss is nan');
  expect(show.output()).toContain('traceback:');
  expect(show.output()).toMatch(/File "[^"]*train\.py", line 4, in step/);
  expect(show.output()).toContain('train.py:4');

  const log = spawnFluksio(['show', runId, '--remote', '--log', 'train'], {
    cwd: project.repo.dir,
    env: { ...env, FLUKSIO_URL: world.app.url },
  });
  expect(await log.exited, log.output()).toBe(0);
  expect(log.output()).toMatch(/^epoch 1\nTraceback \(most recent call last\):\n/);

  const json = spawnFluksio(['show', runId, '--url', world.app.url, '--json'], {
    cwd: project.repo.dir,
    env,
  });
  expect(await json.exited, json.output()).toBe(0);
  // The report with its series, as a local run's `show --json` gives them.
  expect(JSON.parse(json.output())).toMatchObject({
    run: { id: runId, status: 'failed' },
    runner: 'cpu-box',
    series: { loss: { stage: 'train', points: [{ step: 0, value: 0.5 }] } },
  });

  const noToken = spawnFluksio(['show', runId, '--url', world.app.url], { cwd: project.repo.dir });
  expect(await noToken.exited).toBe(2);
  expect(noToken.output()).toContain('No API token: set FLUKSIO_TOKEN');
  // Nothing local was made: the run was read from the control plane.
  expect(existsSync(join(project.repo.dir, '.fluksio'))).toBe(false);
});

test('fluksio run --queue hands the sweep to the control plane as submit does: nothing runs here, the runners run each member', async () => {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'model/\n' });
  await project.repo.git('remote', 'add', 'origin', project.repo.dir);
  await project.repo.git('fetch', '-q', 'origin');
  await world.allow([project.repository]);
  await world.runner('queue-box');

  const queued = spawnFluksio(['run', 'lr=0.1,0.2', '--queue', '--json'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken },
  });
  expect(await queued.exited, queued.output()).toBe(0);
  const sweep = JSON.parse(queued.output().slice(queued.output().indexOf('{'))) as {
    group: string;
    runs: { id: string }[];
  };
  expect(sweep.runs).toHaveLength(2);
  const reports = await Promise.all(sweep.runs.map(({ id }) => world.waitFor(id)));
  expect(
    reports.map((report) => [report.run.status, report.run.params, report.metrics, report.runner]),
  ).toEqual([
    ['succeeded', { lr: 0.1 }, { loss: 0.1 }, 'queue-box'],
    ['succeeded', { lr: 0.2 }, { loss: 0.2 }, 'queue-box'],
  ]);
  // Nothing ran here: no local store, no outputs.
  expect(existsSync(join(project.repo.dir, '.fluksio'))).toBe(false);
  expect(existsSync(join(project.repo.dir, 'model'))).toBe(false);

  const withBackend = spawnFluksio(['run', '--queue', '--backend', 'slurm'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken },
  });
  expect(await withBackend.exited).toBe(2);
  expect(withBackend.output()).toContain('--queue: the control plane');
});

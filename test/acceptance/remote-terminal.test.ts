import { afterAll, afterEach, beforeAll, beforeEach, expect, test, vi } from 'vitest';
import { spawnFluksio } from '../helpers/fluksio-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { hasColor, runInTerminal, widestLine } from '../helpers/terminal-process.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

// A control plane, a runner and a laptop's terminal, each a real process.
vi.setConfig({ testTimeout: 180_000 });

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

const SLOW = `version: 1
stages:
  train:
    cmd: echo "epoch 1" && echo "epoch 2" && sleep 120
    cache: false
`;

/** A repository that is its own origin, pushed, with a token and a runner for it. */
async function laptopProject(pipeline = SLOW) {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': pipeline });
  await project.repo.git('remote', 'add', 'origin', project.repo.dir);
  await project.repo.git('fetch', '-q', 'origin');
  await world.allow([project.repository]);
  await world.runner('cpu-box');
  return project;
}

test("submit --wait streams the stage's lines, and Ctrl-C cancels the run on the control plane and waits for it to end", async () => {
  const project = await laptopProject();
  const submit = runInTerminal(['submit', '--wait'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken, NO_COLOR: '1' },
    columns: 70,
  });
  const queued = await submit.waitFor(/^queued \w{26}/);
  const runId = /^queued (\w{26})/.exec(queued)?.[1] ?? '';
  await submit.waitFor(/train │ epoch 2/, 120_000);
  submit.type('\x03');
  await submit.waitFor(/Cancelling the run on the control plane/);
  // Killed by SIGINT once the run is cancelled, as the shell's own programs end on Ctrl-C.
  expect(await submit.exited, submit.output()).toBe(130);
  expect(submit.output()).toMatch(/⊘ cancelled\s+train/);
  expect(
    submit
      .output()
      .split('\n')
      .filter((line) => line.includes('│ epoch 1')),
  ).toHaveLength(1);
  expect(hasColor(submit.output())).toBe(false);
  const row = await world.row(runId);
  expect(row.status).toBe('cancelled');
  expect(row.statusReason).toContain('Ctrl-C');
});

test("a second Ctrl-C on submit --wait of a sweep leaves (exit 130) once every member's cancel is sent: none is left running", async () => {
  const project = await laptopProject(
    'version: 1\nparams:\n  n: { type: int, default: 1 }\nstages:\n  train:\n    cmd: echo "member ${n}" && sleep 120\n    params: [n]\n    cache: false\n',
  );
  const submit = runInTerminal(['submit', 'n=1,2,3', '--wait'], {
    cwd: project.repo.dir,
    env: { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken, NO_COLOR: '1' },
    columns: 70,
  });
  // The first member runs on the one runner; the other two wait in the queue.
  await submit.waitFor(/train │ member 1/, 120_000);
  const runIds = [...submit.output().matchAll(/^queued (\w{26})/gm)].map((match) => match[1] ?? '');
  expect(runIds).toHaveLength(3);
  submit.type('\x03');
  // The second comes as soon as the first has been handled: while the cancels are on their way.
  await submit.waitFor(/SIGINT received, cancelling/);
  submit.type('\x03');
  expect(await submit.exited, submit.output()).toBe(130);
  expect(submit.output()).toContain('Cancelling 3 runs on the control plane');
  expect(submit.output()).not.toContain('Could not cancel');
  // Every request was answered before the command left: the queued members are cancelled,
  // the running one is being stopped by its runner.
  for (const runId of runIds) {
    const row = await world.row(runId);
    expect(row.status === 'cancelled' || row.cancelRequested, `${runId}: ${row.status}`).toBe(true);
  }
  for (const runId of runIds) expect((await world.waitFor(runId)).run.status).toBe('cancelled');
});

test('submit --wait shows how long a silent remote stage has run on a terminal, and nothing of it in a pipe', async () => {
  const project = await laptopProject('version: 1\nstages:\n  quiet:\n    cmd: sleep 5\n    cache: false\n');
  const env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };
  const onTerminal = runInTerminal(['submit', '--wait'], {
    cwd: project.repo.dir,
    env: { ...env, NO_COLOR: '1' },
    columns: 70,
  });
  await onTerminal.waitFor(/▸ running: quiet \d+\.\d+s/, 120_000);
  expect(await onTerminal.exited, onTerminal.output()).toBe(0);
  expect(onTerminal.output()).toMatch(/✓ ran\s+quiet/);
  expect(hasColor(onTerminal.output())).toBe(false);

  const piped = spawnFluksio(['submit', '--wait'], { cwd: project.repo.dir, env });
  expect(await piped.exited, piped.output()).toBe(0);
  expect(piped.output()).toMatch(/✓ ran\s+quiet/);
  expect(piped.output()).not.toContain('running:');
  expect(piped.output()).not.toContain('\r');
});

test('fluksio cancel waits for a running run to end, or says it is still stopping', async () => {
  const project = await laptopProject();
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  await world.waitFor(runId, (report) => report.stages.some((stage) => stage.status === 'running'));
  const env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };

  const noWait = spawnFluksio(['cancel', runId, '--wait', '0'], { cwd: project.repo.dir, env });
  expect(await noWait.exited, noWait.output()).toBe(1);
  expect(noWait.output()).toContain(`${runId}: still stopping after 0s`);

  // A short id, typed in lower case, names the run as its whole id does.
  const waited = spawnFluksio(['cancel', runId.slice(0, 25).toLowerCase()], { cwd: project.repo.dir, env });
  expect(await waited.exited, waited.output()).toBe(0);
  expect(waited.output()).toMatch(new RegExp(`^${runId}: cancelled`));
  expect((await world.row(runId)).status).toBe('cancelled');
});

const MEASURED = `version: 1
params:
  lr: { type: float, default: 0.1 }
metrics:
  loss: { goal: min }
stages:
  train:
    cmd: echo "::metric name=loss::\${lr}"
    params: [lr]
`;

test('runs --remote and diff --remote on a 70-column terminal take the short ids fluksio prints; an ambiguous one is refused with its candidates', async () => {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': MEASURED });
  await project.repo.git('remote', 'add', 'origin', project.repo.dir);
  await world.allow([project.repository]);
  await world.runner('cpu-box');
  const submitted = async (lr: number) =>
    world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params: { lr },
    });
  const first = await submitted(0.5);
  const second = await submitted(0.1);
  for (const id of [first, second]) expect((await world.waitFor(id)).run.status).toBe('succeeded');
  const env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken, NO_COLOR: '1' };

  const listed = runInTerminal(['runs', '--remote'], { cwd: project.repo.dir, env, columns: 70 });
  expect(await listed.exited, listed.output()).toBe(0);
  expect(listed.output()).toContain(`Runs of ${project.repository}`);
  for (const id of [first, second]) expect(listed.output()).toContain(id.slice(0, 12));
  expect(widestLine(listed.output()), listed.output()).toBeLessThanOrEqual(70);
  expect(hasColor(listed.output())).toBe(false);

  const diffed = runInTerminal(['diff', second.slice(0, 25).toLowerCase(), first.slice(0, 25), '--remote'], {
    cwd: project.repo.dir,
    env,
    columns: 70,
  });
  expect(await diffed.exited, diffed.output()).toBe(0);
  expect(diffed.output()).toMatch(/loss\s+0\.5\s+0\.1\s+−0\.4/);
  expect(diffed.output()).toContain('✅');
  expect(widestLine(diffed.output())).toBeLessThanOrEqual(70);

  // The control plane fixed each run's baseline when it finished: the second is compared
  // with the first, and the first, which had none, is never compared with the later one.
  expect((await world.report(second)).baseline?.id).toBe(first);
  expect((await world.report(first)).baseline).toBeNull();
  const againstBaseline = runInTerminal(['diff', second.slice(0, 25), '--remote'], {
    cwd: project.repo.dir,
    env,
    columns: 70,
  });
  expect(await againstBaseline.exited, againstBaseline.output()).toBe(0);
  // The title wraps at the terminal's width.
  expect(againstBaseline.output().replace(/\s+/g, ' ')).toContain(
    `against run ${first.slice(0, 10)} (its baseline, at`,
  );

  // A sweep's members are compared with runs from before it, never with each other, and
  // it ends with one table of them.
  await project.repo.git('fetch', '-q', 'origin');
  const sweep = spawnFluksio(['submit', 'lr=0.3,0.2', '--wait', '--json'], { cwd: project.repo.dir, env });
  expect(await sweep.exited, sweep.output()).toBe(0);
  expect(sweep.output()).toMatch(/^Sweep \w+: 2 runs/m);
  const swept = JSON.parse(sweep.output().slice(sweep.output().indexOf('{\n  "group"'))) as {
    runs: { run: { id: string }; baseline: { id: string } | null }[];
  };
  for (const member of swept.runs) expect([first, second]).toContain(member.baseline?.id);

  let common = 0;
  while (first[common] === second[common]) common += 1;
  const ambiguous = spawnFluksio(['show', first.slice(0, common), '--remote'], {
    cwd: project.repo.dir,
    env,
  });
  expect(await ambiguous.exited).toBe(2);
  expect(ambiguous.output()).toContain('matches more than one run of the control plane');
  for (const id of [first, second]) expect(ambiguous.output()).toContain(id);

  const unknown = spawnFluksio(['pull', 'ZZZZ'], { cwd: project.repo.dir, env });
  expect(await unknown.exited).toBe(2);
  expect(unknown.output()).toContain('No run of the control plane matches "ZZZZ"');
});

test('runners holds within 70 columns on a terminal and prints no colour there with NO_COLOR, nor into a pipe', async () => {
  await world.start();
  const { createRunner } = await import('../../store/runners/create-runner.js');
  await createRunner({
    db: world.db,
    name: 'gpu-box-01',
    owner: 'acme-machine-learning',
    labels: ['gpu', 'a100', 'cuda12', 'eighty-gigabytes'],
    repositories: ['acme-machine-learning/model-training', 'acme-machine-learning/feature-store'],
    tokenHash: 'a'.repeat(64),
  });
  const dir = await world.scratch();
  const env = { DATABASE_URL: database.url, FLUKSIO_DATA_DIR: dir };
  const onTerminal = runInTerminal(['runners'], { cwd: dir, env: { ...env, NO_COLOR: '1' }, columns: 70 });
  expect(await onTerminal.exited, onTerminal.output()).toBe(0);
  expect(onTerminal.output()).toContain('gpu-box-01');
  expect(onTerminal.output()).toContain('acme-machine-learning/feature-store');
  expect(widestLine(onTerminal.output()), onTerminal.output()).toBeLessThanOrEqual(70);
  expect(hasColor(onTerminal.output())).toBe(false);
  const piped = spawnFluksio(['runners'], { cwd: dir, env: { ...env, NO_COLOR: undefined } });
  expect(await piped.exited, piped.output()).toBe(0);
  expect(piped.output()).toContain(
    'acme-machine-learning/model-training, acme-machine-learning/feature-store',
  );
  expect(hasColor(piped.output())).toBe(false);
});

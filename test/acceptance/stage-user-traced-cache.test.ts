import { chmod } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { stageTestUser, type StageTestUser } from '../helpers/stage-test-user.js';
import { ControlPlaneWorld } from './control-plane-fixture.js';

/** The dedicated user the stages run as; made here when the machine has none. */
const STAGE_USER = 'fluksio-su-trace';

let database: TestDatabase;
let world: ControlPlaneWorld;
let stageUser: StageTestUser;

beforeAll(async () => {
  database = await createTestDatabase();
  stageUser = stageTestUser(STAGE_USER);
});
afterAll(async () => {
  await database.close();
  stageUser.remove();
});
beforeEach(() => {
  world = new ControlPlaneWorld(database.db, database.url);
});
afterEach(async () => {
  await world.close();
});

/**
 * A Python stage, so traced: it reads a tracked config file it does not declare. The
 * system's interpreter, by path: the stage user cannot enter the test's home.
 */
const PIPELINE = `version: 1
stages:
  train:
    cmd: /usr/bin/python3 train.py
    deps: [train.py]
    outs: [model.txt]
`;

test('a traced stage run as --stage-user is keyed on what it read, and handing it the checkout is no change of what it read', async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': PIPELINE,
    '.gitignore': 'model.txt\n',
    'conf/x.json': '{"scale": 2}\n',
    'train.py':
      'import json\nscale = json.load(open("conf/x.json"))["scale"]\nopen("model.txt", "w").write(str(scale) + "\\n")\n',
  });
  await world.allow([project.repository]);
  const runner = await world.runner('stage-user-trace', { args: ['--stage-user', STAGE_USER] });
  // The stage user passes through the work directory to its checkout.
  await chmod(runner.workDir, 0o755);
  const report = await world.waitFor(
    await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
    }),
  );
  expect(report.run.status, JSON.stringify(report)).toBe('succeeded');
  // Traced (the note names what it read; its hook and reports are the stage user's too),
  // and keyed: the chown before the stage changed every file's ctime, and nothing else.
  expect(report.stages).toMatchObject([
    {
      name: 'train',
      status: 'ran',
      cacheKey: expect.stringMatching(/^[0-9a-f]{64}$/),
      notes: ['train read conf/x.json, which is not among its deps'],
    },
  ]);
});

test('a two-stage pipeline run as --stage-user reads its code between the stages, and runs again from the cache', async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': `version: 1
stages:
  prepare:
    cmd: /usr/bin/python3 prepare.py
    deps: [prepare.py]
    outs: [data.txt]
  train:
    cmd: /usr/bin/python3 train.py
    deps: [train.py, data.txt]
    outs: [model.txt]
`,
    '.gitignore': 'data.txt\nmodel.txt\n',
    'prepare.py': 'open("data.txt", "w").write("1 2 3\\n")\n',
    'train.py': 'open("model.txt", "w").write(str(sum(map(int, open("data.txt").read().split()))) + "\\n")\n',
  });
  await world.allow([project.repository]);
  const runner = await world.runner('stage-user-two', { args: ['--stage-user', STAGE_USER] });
  await chmod(runner.workDir, 0o755);
  const submit = () =>
    world.submit({ repository: project.repository, cloneUrl: project.cloneUrl, commit: project.commit });
  // The runner's git reads the code after each stage: the checkout is the stage user's while one runs.
  const first = await world.waitFor(await submit());
  expect(first.run.status, JSON.stringify(first)).toBe('succeeded');
  expect(first.stages).toMatchObject([
    { name: 'prepare', status: 'ran' },
    { name: 'train', status: 'ran' },
  ]);
  expect(first.run.dirty).toBe(false);
  const again = await world.waitFor(await submit());
  expect(again.run.status, JSON.stringify(again)).toBe('succeeded');
  expect(again.stages).toMatchObject([
    { name: 'prepare', status: 'cached', cachedFrom: first.run.id },
    { name: 'train', status: 'cached', cachedFrom: first.run.id },
  ]);
});

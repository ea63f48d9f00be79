import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
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

/**
 * Two pipelines of one repository, in folders of their own, written alike: each stage runs
 * in its pipeline's folder, so `python3 train.py` runs a/train.py in one and b/train.py in
 * the other. The control plane keeps one cache per repository, and nothing in a key said
 * which folder a stage ran in: b's traced `train` took a's entry (a's read set, a/train.py,
 * still held) and its untraced `shell` a's exact key, so b's outs were a's.
 */
const PIPELINE = `version: 1
stages:
  train:
    cmd: python3 train.py
    outs: [model.txt]
  shell:
    cmd: sh make.sh
    outs: [shell.txt]
`;

test("two pipelines' stages with the same command in different folders never share a cache entry", async () => {
  await world.start();
  const project = await world.repo({
    '.gitignore': 'model.txt\nshell.txt\n',
    'a/fluksio.yml': PIPELINE,
    'a/train.py': 'open("model.txt", "w").write("made by a\\n")\n',
    'a/make.sh': 'echo "made by a" > shell.txt\n',
    'b/fluksio.yml': PIPELINE,
    'b/train.py': 'open("model.txt", "w").write("made by b\\n")\n',
    'b/make.sh': 'echo "made by b" > shell.txt\n',
  });
  await world.allow([project.repository]);
  await world.runner('cluster');
  const on = (pipelinePath: string) =>
    world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      pipelinePath,
      params: {},
    });

  const a = await world.waitFor(await on('a/fluksio.yml'));
  expect(a.run.status, JSON.stringify(a.stages)).toBe('succeeded');
  const b = await world.waitFor(await on('b/fluksio.yml'));
  expect(b.run.status, JSON.stringify(b.stages)).toBe('succeeded');
  expect(b.stages.map(({ name, status }) => [name, status])).toEqual([
    ['train', 'ran'],
    ['shell', 'ran'],
  ]);
  const digests = (report: typeof a) => report.stages.map((stage) => stage.outs[0]?.digest);
  for (const [index, digest] of digests(b).entries()) expect(digest).not.toBe(digests(a)[index]);

  // Each pipeline still hits its own entries.
  const again = await world.waitFor(await on('b/fluksio.yml'));
  expect(again.stages.map(({ status, cachedFrom }) => [status, cachedFrom])).toEqual([
    ['cached', b.run.id],
    ['cached', b.run.id],
  ]);
}, 240_000);

import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { stageTestUser, type StageTestUser } from '../helpers/stage-test-user.js';

/** The dedicated user the stages run as in the last test; made here when the machine has none. */
const STAGE_USER = 'fluksio-stage-gitread';

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
 * The attacker's stage. The runner reads the code again with git after each stage, in
 * the checkout, outside any sandbox: each plant names a program that git runs when it
 * reads there, and that program leaves a file in `marker_dir`, a directory the stage
 * cannot write. `core.fsmonitor` in the checkout's `.git/config` runs on any read of the
 * index (`git ls-files`); a clean filter there, named by `.git/info/attributes`, runs when
 * `git hash-object` hashes the edited `data.txt`; a nested repository the stage makes in
 * its work tree is read by git with its own config.
 */
const PLANT = String.raw`#!/bin/sh
marker_dir=$1
printf '[core]\n\tfsmonitor = "id -u >%s/fsmonitor; false"\n[filter "evil"]\n\tclean = "id -u >%s/clean-filter; cat"\n' \
  "$marker_dir" "$marker_dir" >>.git/config
mkdir -p .git/info && echo 'data.txt filter=evil' >.git/info/attributes
printf 'data\n\n' >data.txt
mkdir -p nested/.git/objects nested/.git/refs
echo 'ref: refs/heads/main' >nested/.git/HEAD
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = "id -u >%s/nested-fsmonitor; false"\n' \
  "$marker_dir" >nested/.git/config
echo nested >nested/file.txt
echo planted >out.txt
`;

const PIPELINE = `version: 1
params:
  marker_dir: { type: string, default: "" }
stages:
  plant:
    cmd: sh plant.sh \${marker_dir}
    params: [marker_dir]
    outs: [out.txt]
  next:
    cmd: cat out.txt > next.txt
    deps: [out.txt]
    outs: [next.txt]
`;

const PROJECT = {
  'fluksio.yml': PIPELINE,
  'plant.sh': PLANT,
  'data.txt': 'data\n',
  '.gitignore': 'out.txt\nnext.txt\n',
};

/** Which of the plants ran, by marker file. */
async function ran(markerDir: string): Promise<string[]> {
  return (await readdir(markerDir)).sort();
}

test('what a fork’s sandboxed stage plants in its checkout’s git state runs nothing when the runner reads the code after it', async () => {
  await world.start();
  const project = await world.repo(PROJECT);
  await world.allow([project.repository]);
  const markerDir = await world.scratch();
  const runner = await world.runner('forks', { args: ['--accept-forks'] });
  await runner.waitFor(/runner started/);

  const report = await world.waitFor(await world.queueForkRun(project, { marker_dir: markerDir }));
  expect(report.sandbox).toMatch(/^bubblewrap \d/);
  expect(await ran(markerDir)).toEqual([]);
  // The stages ran: the plants were in place when the runner read the code.
  expect(report.run.status, JSON.stringify(report)).toBe('succeeded');
  const [checkout = ''] = await readdir(join(runner.workDir, 'checkouts', '0'));
  expect(existsSync(join(runner.workDir, 'checkouts', '0', checkout, 'next.txt'))).toBe(true);
}, 180_000);

test('what a stage run as --stage-user plants in its checkout’s git state runs nothing as root when the runner reads the code after it', async () => {
  await world.start();
  const project = await world.repo(PROJECT);
  await world.allow([project.repository]);
  const markerDir = await world.scratch();
  const runner = await world.runner('stage-user', { args: ['--stage-user', STAGE_USER] });
  await runner.waitFor(/runner started/);

  const report = await world.waitFor(
    await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params: { marker_dir: markerDir },
    }),
  );
  expect(report.sandbox).toMatch(/^stage user/);
  expect(await ran(markerDir)).toEqual([]);
  expect(report.run.status, JSON.stringify(report)).toBe('succeeded');
}, 180_000);

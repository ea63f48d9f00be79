import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';

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
 * The fork author's stage, in its sandbox: the checkout's `.git` is writable there, and
 * the runner rewrites only `.git/config` before its next checkout. A `commondir` file
 * makes git read another directory's config instead, and there a filter driver the
 * committed `.gitattributes` names; a submodule-free repository is enough. The filter
 * runs as the runner's user, outside the sandbox, when the next checkout rewrites
 * `data.txt`; it leaves a file in the work directory, which the sandbox masks.
 */
const PLANT = String.raw`#!/bin/sh
work_dir=$1
mkdir -p .git/evil/refs
ln -sfn ../objects .git/evil/objects
printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n[filter "evil"]\n\tsmudge = "touch %s/pwned-by-filter && cat"\n' "$work_dir" >.git/evil/config
echo evil >.git/commondir
echo changed >data.txt
echo planted > out.txt
`;

const PIPELINE = `version: 1
params:
  work_dir: { type: string, default: "" }
  attempt: { type: int, default: 0 }
stages:
  plant:
    cmd: sh plant.sh \${work_dir}
    params: [work_dir, attempt]
    outs: [out.txt]
`;

test('what a sandboxed stage plants in its checkout’s .git runs nothing in the runner’s next checkout', async () => {
  await world.start();
  const project = await world.repo({
    'fluksio.yml': PIPELINE,
    'plant.sh': PLANT,
    'data.txt': 'data\n',
    '.gitattributes': 'data.txt filter=evil\n',
    '.gitignore': 'out.txt\n',
  });
  await world.allow([project.repository]);
  const runner = await world.runner('forks', { args: ['--accept-forks'] });
  await runner.waitFor(/runner started/);

  const first = await world.waitFor(
    await world.queueForkRun(project, { work_dir: runner.workDir, attempt: 1 }),
  );
  expect(first.run.status, JSON.stringify(first)).toBe('succeeded');
  expect(first.sandbox).toMatch(/^bubblewrap \d/);
  // The plant held in the sandbox: it is in the checkout the runner keeps.
  const checkouts = join(runner.workDir, 'checkouts', '0');
  const [checkout = ''] = await readdir(checkouts);
  expect(await readFile(join(checkouts, checkout, '.git', 'commondir'), 'utf8')).toBe('evil\n');
  expect(existsSync(join(runner.workDir, 'pwned-by-filter'))).toBe(false);

  const second = await world.waitFor(
    await world.queueForkRun(project, { work_dir: runner.workDir, attempt: 2 }),
  );
  expect(second.run.status, JSON.stringify(second)).toBe('succeeded');
  expect(existsSync(join(runner.workDir, 'pwned-by-filter'))).toBe(false);
}, 180_000);

import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
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
 * An unsandboxed stage plants what would make git run a command in the next run's fetch
 * (the mirror's `core.alternateRefsCommand` and `objects/info/alternates`), and a
 * symlink in its checkout's `.git` that the runner's next write would follow.
 */
const PLANT = String.raw`#!/bin/sh
work_dir=$1 marker_dir=$2 borrowed=$3 target=$4
echo ok > out.txt
[ -n "$work_dir" ] || exit 0
for mirror in "$work_dir"/mirrors/*.git; do
  printf '[core]\n\talternateRefsCommand = touch %s/alternate-refs-ran\n' "$marker_dir" >>"$mirror/config"
  echo "$borrowed" >"$mirror/objects/info/alternates"
done
rm -f .git/config && ln -s "$target" .git/config
`;

const PIPELINE = `version: 1
params:
  work_dir: { type: string, default: "" }
  marker_dir: { type: string, default: "" }
  borrowed: { type: string, default: "" }
  target: { type: string, default: "" }
stages:
  plant:
    cmd: sh plant.sh \${work_dir} \${marker_dir} \${borrowed} \${target}
    params: [work_dir, marker_dir, borrowed, target]
    outs: [out.txt]
`;

test('what a stage wrote into the mirror’s config and alternates, or symlinked in its .git, acts in no later run', async () => {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': PIPELINE, 'plant.sh': PLANT, '.gitignore': 'out.txt\n' });
  await world.allow([project.repository]);
  const runner = await world.runner('plain');
  const scratch = await world.scratch();
  const target = join(scratch, 'target.txt');
  await writeFile(target, 'untouched\n');
  const params = {
    work_dir: runner.workDir,
    marker_dir: scratch,
    borrowed: join(project.repo.dir, '.git', 'objects'),
    target,
  };

  const planted = await world.waitFor(
    await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: project.commit,
      params,
    }),
  );
  expect(planted.run.status).toBe('succeeded');
  const [mirror] = await readdir(join(runner.workDir, 'mirrors'));
  const mirrorDir = join(runner.workDir, 'mirrors', mirror ?? '');
  // The stage could reach the mirror: the attack is in place.
  expect(await readFile(join(mirrorDir, 'config'), 'utf8')).toContain('alternateRefsCommand');
  expect(existsSync(join(mirrorDir, 'objects', 'info', 'alternates'))).toBe(true);

  // A new commit, so that the next run fetches into the mirror.
  const next = await project.repo.commitAll('next');
  const after = await world.waitFor(
    await world.submit({
      repository: project.repository,
      cloneUrl: project.cloneUrl,
      commit: next,
      params: {},
    }),
  );
  expect(after.run.status, after.run.reason ?? '').toBe('succeeded');
  expect(existsSync(join(scratch, 'alternate-refs-ran'))).toBe(false);
  expect(await readFile(target, 'utf8')).toBe('untouched\n');
  expect(await readFile(join(mirrorDir, 'config'), 'utf8')).not.toContain('alternateRefsCommand');
  expect(existsSync(join(mirrorDir, 'objects', 'info', 'alternates'))).toBe(false);
}, 180_000);

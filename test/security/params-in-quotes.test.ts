import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli, runJson } from '../helpers/run-cli.js';

/** A value that creates `pwned` wherever a shell evaluates it, in every quoting style. */
const HOSTILE = `'$(touch pwned)"$(touch pwned)"\`touch pwned\`'`;

/** Params in every place a maintainer writes them; each stage also reads its variable. */
const PIPELINE = `version: 1
params:
  note: { type: string, default: "" }
stages:
  echo:
    cmd: echo "note=\${note}" > note.txt && echo 'note=\${note}' >> note.txt && echo note=\${note} >> note.txt && printf '%s' "$FLUKSIO_PARAM_NOTE" > variable.txt
    params: [note]
    outs: [note.txt, variable.txt]
`;

let database: TestDatabase;
let repo: TestRepo | undefined;
let world: ControlPlaneWorld | undefined;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.close();
});
afterEach(async () => {
  await repo?.cleanup();
  await world?.close();
  repo = undefined;
  world = undefined;
});

async function filesNamed(dir: string, name: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((entry) => entry.split('/').at(-1) === name);
}

test('a param inside quotes runs nothing locally: the value arrives literally, and as FLUKSIO_PARAM_NOTE', async () => {
  repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, '.gitignore': 'note.txt\nvariable.txt\n' } });
  const { code, report, stderr } = await runJson([`note=${HOSTILE}`], { cwd: repo.dir });
  expect(code, stderr).toBe(0);
  expect(report.run.status).toBe('succeeded');
  expect(await readFile(join(repo.dir, 'note.txt'), 'utf8')).toBe(`note=${HOSTILE}\n`.repeat(3));
  expect(await readFile(join(repo.dir, 'variable.txt'), 'utf8')).toBe(HOSTILE);
  expect(await filesNamed(repo.dir, 'pwned')).toEqual([]);
});

test('a param where no quoting is safe is refused before anything runs, saying how to write it', async () => {
  repo = await makeRepo({
    files: {
      'fluksio.yml': PIPELINE.replace(/cmd: .*/, 'cmd: echo "$(echo ${note})" > note.txt; touch ran.txt'),
      '.gitignore': 'note.txt\nvariable.txt\nran.txt\n',
    },
  });
  const result = await runCli(['run', `note=${HOSTILE}`], { cwd: repo.dir });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain(
    'stages.echo.cmd: ${note} is inside a command substitution $(…), where its value could run as shell code',
  );
  expect(result.stderr).toContain('"$FLUKSIO_PARAM_NOTE"');
  expect(existsSync(join(repo.dir, 'ran.txt'))).toBe(false);
  expect(await filesNamed(repo.dir, 'pwned')).toEqual([]);
});

test('a param inside quotes runs nothing on a runner either', async () => {
  world = new ControlPlaneWorld(database.db, database.url);
  await world.start();
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'note.txt\nvariable.txt\n' });
  await world.allow([project.repository]);
  const runner = await world.runner('box');
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
    params: { note: HOSTILE },
  });
  const report = await world.waitFor(runId);
  expect(report.run.status, report.run.reason ?? '').toBe('succeeded');
  const [checkout] = await filesNamed(runner.workDir, 'variable.txt');
  expect(checkout).toBeDefined();
  const dir = join(runner.workDir, checkout ?? '', '..');
  expect(await readFile(join(dir, 'note.txt'), 'utf8')).toBe(`note=${HOSTILE}\n`.repeat(3));
  expect(await readFile(join(dir, 'variable.txt'), 'utf8')).toBe(HOSTILE);
  expect(await filesNamed(runner.workDir, 'pwned')).toEqual([]);
});

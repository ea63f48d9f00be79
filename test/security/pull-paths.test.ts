import { existsSync } from 'node:fs';
import { readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneWorld } from '../acceptance/control-plane-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { runCli } from '../helpers/run-cli.js';
import { SCRIPTED_RUNNER_SETTINGS, ScriptedRunner } from './scripted-runner.js';

/** What an attacker wants in the puller's git config: a command git runs on every status. */
const FSMONITOR = '[core]\n\tfsmonitor = touch pwned\n';

/** Declares `g/config`, with `g` a committed symlink to `.git`. */
const PIPELINE = `version: 1
stages:
  train:
    cmd: touch ran.txt && echo weights > model.txt && printf '[core]\\n\\tfsmonitor = touch pwned\\n' > g/config
    outs: [model.txt, g/config]
`;

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

/** A repository whose committed `g` points at its own `.git`. */
async function projectWithGitLink() {
  const project = await world.repo({
    'fluksio.yml': PIPELINE,
    'train.py': 'print(1)\n',
    '.gitignore': 'model.txt\nran.txt\n',
  });
  await symlink('.git', join(project.repo.dir, 'g'));
  const commit = await project.repo.commitAll('g -> .git');
  return { ...project, commit };
}

async function filesNamed(dir: string, name: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true });
  return entries.filter((entry) => entry.split('/').at(-1) === name);
}

test('an out through a committed symlink into .git is refused before anything runs, on a runner and locally', async () => {
  await world.start(SCRIPTED_RUNNER_SETTINGS);
  const project = await projectWithGitLink();
  const gitConfig = await readFile(join(project.repo.dir, '.git/config'), 'utf8');
  await world.allow([project.repository]);
  const runner = await world.runner('box');
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  const report = await world.waitFor(runId);
  expect(report.run.status).toBe('failed');
  expect(report.run.reason).toContain(
    `"g/config" goes through the symlink "g"; an output's path may not pass through symlinks`,
  );
  expect(report.stages.flatMap((stage) => stage.outs)).toEqual([]);
  expect(await filesNamed(runner.workDir, 'ran.txt')).toEqual([]);

  const local = await runCli(['run'], { cwd: project.repo.dir });
  expect(local.code).toBe(2);
  expect(local.stderr).toContain('stages.train.outs[1]: "g/config" goes through the symlink "g"');
  expect(existsSync(join(project.repo.dir, 'ran.txt'))).toBe(false);
  expect(await readFile(join(project.repo.dir, '.git/config'), 'utf8')).toBe(gitConfig);
});

test('a hostile runner cannot make pull write into .git, through a symlink, or anywhere its pipeline does not declare', async () => {
  await world.start(SCRIPTED_RUNNER_SETTINGS);
  const project = await projectWithGitLink();
  const gitConfig = await readFile(join(project.repo.dir, '.git/config'), 'utf8');
  await world.allow([project.repository]);
  const hostile = await ScriptedRunner.register(database.db, world.app.url);
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  const claim = await hostile.claim();
  expect(claim.run.id).toBe(runId);
  await hostile.start(claim);
  const config = await hostile.putBlob(claim, FSMONITOR);
  const code = await hostile.putBlob(claim, 'import os; os.system("touch pwned")\n');
  const file = (path: string, digest: string, size: number) => ({
    path,
    kind: 'file' as const,
    digest,
    size,
  });

  // Straight into .git, in any spelling: the control plane refuses the event.
  for (const path of ['.git/config', '.GIT/config', 'sub/.Git./config']) {
    const answer = await hostile.reportStage(claim, 0, 'train', [file(path, config, FSMONITOR.length)]);
    expect(answer.status, answer.text).toBe(400);
  }
  // Declared, but through the symlink; and a tracked file no stage declares.
  expect(
    (await hostile.reportStage(claim, 0, 'train', [file('g/config', config, FSMONITOR.length)])).status,
  ).toBe(200);
  expect((await hostile.reportStage(claim, 1, 'other', [file('train.py', code, 36)])).status).toBe(200);
  expect((await hostile.finish(claim)).status).toBe(200);

  const env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };
  const throughLink = await runCli(['pull', runId, 'g/config'], { cwd: project.repo.dir, env });
  expect(throughLink.code).toBe(2);
  expect(throughLink.stderr).toContain('"g/config" goes through the symlink "g"');
  const undeclared = await runCli(['pull', runId], { cwd: project.repo.dir, env });
  expect(undeclared.code).toBe(1);
  expect(undeclared.stderr).toContain('does not declare: "train.py"; nothing was written');

  expect(await readFile(join(project.repo.dir, '.git/config'), 'utf8')).toBe(gitConfig);
  expect(await readFile(join(project.repo.dir, 'train.py'), 'utf8')).toBe('print(1)\n');
  expect(await filesNamed(project.repo.dir, 'pwned')).toEqual([]);
  expect(await project.repo.git('status', '--porcelain')).toBe('');
});

test('pull never replaces a file with other contents without --force', async () => {
  await world.start(SCRIPTED_RUNNER_SETTINGS);
  const project = await world.repo({
    'fluksio.yml':
      'version: 1\nstages:\n  train:\n    cmd: echo weights > model.txt\n    outs: [model.txt]\n',
    '.gitignore': 'model.txt\n',
  });
  await world.allow([project.repository]);
  await world.runner('box');
  const runId = await world.submit({
    repository: project.repository,
    cloneUrl: project.cloneUrl,
    commit: project.commit,
  });
  expect((await world.waitFor(runId)).run.status).toBe('succeeded');
  const env = { FLUKSIO_URL: world.app.url, FLUKSIO_TOKEN: world.apiToken };
  const model = join(project.repo.dir, 'model.txt');

  await writeFile(model, 'my own weights\n');
  const refused = await runCli(['pull', runId], { cwd: project.repo.dir, env });
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('"model.txt" exists with other contents; pass --force to replace it');
  expect(await readFile(model, 'utf8')).toBe('my own weights\n');

  const forced = await runCli(['pull', runId, '--force'], { cwd: project.repo.dir, env });
  expect(forced.code, forced.stderr).toBe(0);
  expect(await readFile(model, 'utf8')).toBe('weights\n');
  const again = await runCli(['pull', runId], { cwd: project.repo.dir, env });
  expect(again.code, again.stderr).toBe(0);
});

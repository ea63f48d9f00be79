import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
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
  if (world.app) await world.close();
});

const PIPELINE = 'version: 1\nstages:\n  work:\n    cmd: echo ok > out.txt\n    outs: [out.txt]\n';
const HOSTILE =
  'version: 1\nstages:\n  work:\n    cmd: touch pwned; echo ok > out.txt\n    outs: [out.txt]\n';

test("a fork pull request's commit submitted by its SHA never runs as trusted: it is approved on its pull request", async () => {
  await world.start();
  const project = await world.repo({ 'fluksio.yml': PIPELINE, '.gitignore': 'out.txt\n' });
  const { repo } = project;
  // A fork's pull request #9 as GitHub holds it in the base repository: its head only at
  // refs/pull/9/head (the commit is on no branch here) and GitHub's merge at refs/pull/9/merge.
  await repo.git('checkout', '--quiet', '-b', 'fork-work');
  await repo.write('fluksio.yml', HOSTILE);
  const forkHead = await repo.commitAll('a fork contributor’s change');
  await repo.git('checkout', '--quiet', '--detach', project.commit);
  await repo.git('merge', '--quiet', '--no-ff', '-m', 'Merge pull request #9', forkHead);
  const forkMerge = (await repo.git('rev-parse', 'HEAD')).trim();
  await repo.git('update-ref', 'refs/pull/9/head', forkHead);
  await repo.git('update-ref', 'refs/pull/9/merge', forkMerge);
  await repo.git('checkout', '--quiet', 'main');
  await repo.git('branch', '--quiet', '-D', 'fork-work');
  // A same-repository pull request #10: its branch is the repository's, and so is GitHub's merge.
  await repo.git('checkout', '--quiet', '-b', 'feature');
  await repo.write('notes.txt', 'a teammate’s change\n');
  const featureHead = await repo.commitAll('a teammate’s change');
  await repo.git('checkout', '--quiet', '--detach', project.commit);
  await repo.git('merge', '--quiet', '--no-ff', '-m', 'Merge pull request #10', featureHead);
  const featureMerge = (await repo.git('rev-parse', 'HEAD')).trim();
  await repo.git('update-ref', 'refs/pull/10/head', featureHead);
  await repo.git('update-ref', 'refs/pull/10/merge', featureMerge);
  await repo.git('checkout', '--quiet', 'main');
  await world.allow([project.repository]);
  const runner = await world.runner('box');

  for (const commit of [forkHead, forkMerge]) {
    const runId = await world.submit({ repository: project.repository, cloneUrl: project.cloneUrl, commit });
    const report = await world.waitFor(runId);
    expect(report.run.status).toBe('failed');
    expect(report.run.reason).toContain(`Commit ${commit} is on no branch or tag of ${project.repository}`);
    expect(report.run.reason).toContain('/fluksio run --sha');
  }
  const entries = await readdir(runner.workDir, { recursive: true });
  expect(entries.filter((entry) => entry.endsWith('pwned'))).toEqual([]);

  // The same-repository pull request's head and GitHub's merge of it (what a `pull_request`
  // workflow checks out and the action submits) run.
  for (const commit of [featureHead, featureMerge]) {
    const runId = await world.submit({ repository: project.repository, cloneUrl: project.cloneUrl, commit });
    expect((await world.waitFor(runId)).run.status).toBe('succeeded');
  }
  expect(existsSync(join(repo.dir, 'pwned'))).toBe(false);
});

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import { createRunner } from '../../store/create-runner.js';
import { makeRepo } from '../helpers/make-repo.js';
import { startRunner } from '../runner-daemon/helpers/runner-process.js';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  waitFor,
} from './github-app-fixture.js';

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.01 }
stages:
  train:
    cmd: echo "::metric name=accuracy::0.9" && echo \${lr} > model.txt
    params: [lr]
    outs: [model.txt]
`;

beforeAll(openGitHubAppDatabase);
afterAll(closeGitHubAppDatabase);

test('a comment’s run is claimed by a real runner, fetched with the installation token, which is revoked before it finishes', async () => {
  const repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE, '.gitignore': 'model.txt\n' } });
  const commit = (await repo.git('rev-parse', 'HEAD')).trim();
  const world = await openGitHubAppWorld({ cloneUrl: `file://${repo.dir}` });
  const workDir = await mkdtemp(path.join(tmpdir(), 'fluksio-runner-'));
  const runnerToken = randomBytes(32).toString('hex');
  await createRunner({
    db: world.db,
    name: 'box',
    owner: 'acme',
    labels: [],
    repositories: [],
    tokenHash: hashToken(runnerToken),
  });
  const runner = startRunner(
    { workDir },
    { FLUKSIO_URL: world.plane.url, FLUKSIO_RUNNER_TOKEN: runnerToken },
  );
  try {
    world.double.setFile(world.repo.fullName, commit, 'fluksio.yml', PIPELINE);
    world.setHead(commit);
    await world.deliver(world.comment('/fluksio run lr=0.1'));
    const [run] = await world.runs();
    const done = await waitFor(
      'the run to succeed',
      async () => {
        const [current] = await world.runs();
        return current && ['succeeded', 'failed'].includes(current.status) && current;
      },
      60_000,
    );
    expect(done, runner.output()).toMatchObject({ status: 'succeeded', commit, metrics: { accuracy: 0.9 } });
    const [token, ...others] = world.double.issuedTokens().filter((issued) => issued.repositoryIds !== null);
    expect(others).toEqual([]);
    expect(token).toMatchObject({ repositoryIds: [world.repo.id], permissions: { contents: 'read' } });
    expect(token?.revokedAt).not.toBeNull();
    expect(token?.revokedAt?.getTime()).toBeLessThanOrEqual(done.finishedAt?.getTime() ?? 0);
    expect(runner.output()).not.toContain(token?.token);
    const checkRun = await waitFor('the completed check run', () => {
      const found = world.double
        .checkRuns(world.repo.fullName)
        .find((candidate) => candidate.externalId === run?.id);
      return found?.status === 'completed' && found;
    });
    expect(checkRun.conclusion).toBe('success');
  } finally {
    await runner.stop('SIGKILL');
    await world.close();
    await repo.cleanup();
    await rm(workDir, { recursive: true, force: true });
  }
  expect(world.double.violations).toEqual([]);
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import { createRunner } from '../../store/runners/create-runner.js';
import { removeDir, startRunnerProcess } from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import { makeRepo } from '../helpers/make-repo.js';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  SHA,
  waitFor,
} from '../app-github/github-app-fixture.js';

const PIPELINE = `version: 1
stages:
  train: { cmd: "true" }
`;

beforeAll(openGitHubAppDatabase);
afterAll(closeGitHubAppDatabase);

/**
 * DESIGN §6: the installation token a claim carries reaches git only through its
 * environment. When the fetch fails — here the pull request's head is a commit the
 * repository does not have — git's error becomes the run's reason and the check run's
 * summary; neither, nor the runner's or the control plane's log, holds the token.
 */
test('a fetch that fails puts git’s error in the check run, never the installation token', async () => {
  const repo = await makeRepo({ files: { 'fluksio.yml': PIPELINE } });
  const world = await openGitHubAppWorld({ serve: repo.dir });
  const { double } = world;
  let runner: (FluksioProcess & { workDir: string }) | undefined;
  try {
    double.setFile(world.repo.fullName, SHA.newHead, 'fluksio.yml', PIPELINE);
    world.setHead(SHA.newHead);
    const token = randomBytes(32).toString('hex');
    await createRunner({
      db: world.db,
      name: 'box',
      owner: 'acme',
      labels: [],
      repositories: [],
      tokenHash: hashToken(token),
    });
    await world.deliver(world.comment('/fluksio run'));
    runner = await startRunnerProcess({
      url: world.plane.url,
      token,
      env: { GIT_SSL_CAINFO: double.caFile ?? '' },
    });
    const run = await waitFor(
      'the run to fail',
      async () => (await world.runs()).find((candidate) => candidate.status === 'failed'),
      60_000,
    );
    const checkRun = await waitFor('the completed check run', () => {
      const found = double.checkRuns(world.repo.fullName).find((each) => each.externalId === run.id);
      return found?.status === 'completed' && found;
    });
    const report = [checkRun.output.title, checkRun.output.summary, checkRun.output.text].join('\n');
    expect(run.statusReason).toMatch(/^Could not fetch commit /);
    expect(report).toContain(`Could not fetch commit ${SHA.newHead}`);
    const issued = double.issuedTokens().filter((each) => each.repositoryIds !== null);
    expect(issued.length).toBeGreaterThan(0);
    const seen = { reason: run.statusReason ?? '', report, runner: runner.output(), plane: world.logs() };
    for (const { token: secret } of issued) {
      const header = Buffer.from(`x-access-token:${secret}`).toString('base64');
      for (const [where, text] of Object.entries(seen)) {
        expect(text, where).not.toContain(secret);
        expect(text, where).not.toContain(header);
      }
    }
  } finally {
    await runner?.stop('SIGKILL');
    if (runner) await removeDir(runner.workDir);
    await world.close();
    await repo.cleanup();
  }
  expect(double.violations).toEqual([]);
});

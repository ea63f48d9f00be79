import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { hashToken } from '../../app/http/hash-token.js';
import type { Run } from '../../schemas/tables/runs.js';
import { createRunner } from '../../store/runners/create-runner.js';
import { pushPayload } from '../github/webhook-fixtures.js';
import { removeDir, startRunnerProcess } from '../helpers/control-plane-processes.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import { makeRepo } from '../helpers/make-repo.js';
import {
  closeGitHubAppDatabase,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  waitFor,
  type GitHubAppWorld,
} from './github-app-fixture.js';

const PIPELINE = `version: 1
params:
  lr: { type: float, default: 0.01 }
on:
  push: { branches: [main] }
metrics:
  accuracy: { goal: max }
stages:
  prepare:
    cmd: python3 prepare.py
    deps: [prepare.py]
    outs: [data.txt]
    code: false
  train:
    cmd: python3 train.py \${lr}
    deps: [train.py, data.txt]
    params: [lr]
    metrics: [metrics.json]
`;

const PREPARE = `with open("data.txt", "w") as out:
    out.write("1 2 3\\n")
`;

/** Accuracy grows with the learning rate, so the diff has a direction. */
const TRAIN = `import json, sys, time
lr = float(sys.argv[1])
time.sleep(2)  # long enough for the check run to be seen in progress
with open("metrics.json", "w") as out:
    json.dump({"accuracy": round(0.5 + lr, 4)}, out)
`;

beforeAll(openGitHubAppDatabase);
afterAll(closeGitHubAppDatabase);

/**
 * Acceptance 1 of the GitHub App, over real HTTP throughout: a push to main makes the
 * baseline; a signed `/fluksio run lr=0.1` on the pull request is seen and queued; a real
 * `fluksio runner` process clones the pull request's head from the double over HTTPS with
 * the installation token minted at claim, which is revoked after the fetch; one check run
 * goes queued → in progress → success, its summary holding the stamp, the stages (prepare
 * cached from the main run, train re-run and why) and the metric diff against main.
 */
test('/fluksio run lr=0.1: 👀 and 🚀, a real runner fetches the head with the installation token, one check run queued → in progress → success with the diff against main', async () => {
  const repo = await makeRepo({
    files: {
      'fluksio.yml': PIPELINE,
      'prepare.py': PREPARE,
      'train.py': TRAIN,
      '.gitignore': 'data.txt\nmetrics.json\n',
    },
  });
  const main = (await repo.git('rev-parse', 'HEAD')).trim();
  await repo.git('checkout', '--quiet', '-b', 'feature');
  await repo.write('train.py', `${TRAIN}# a comment that changes train.py\n`);
  const head = await repo.commitAll('Change train.py');
  const world = await openGitHubAppWorld({ serve: repo.dir });
  const { double } = world;
  let runner: (FluksioProcess & { workDir: string }) | undefined;
  try {
    for (const sha of [main, head]) double.setFile(world.repo.fullName, sha, 'fluksio.yml', PIPELINE);
    double.setCommits(world.repo.fullName, [main], { branch: 'main' });
    double.setCommits(world.repo.fullName, [head, main]);
    world.setHead(head);
    const runnerToken = await registerRunner(world);

    // The baseline: a push to main, run by the runner.
    await world.deliver(pushPayload({ repo: world.repo, ref: 'main', after: main }));
    runner = await startRunnerProcess({
      url: world.plane.url,
      token: runnerToken,
      env: { GIT_SSL_CAINFO: double.caFile ?? '' },
    });
    const baseline = await finished(world, (run) => run.commit === main, runner);
    expect(baseline, runner.output()).toMatchObject({ status: 'succeeded', metrics: { accuracy: 0.51 } });

    // The command, handled while the runner is away, so its check run is seen queued first.
    await runner.stop('SIGTERM');
    const comment = world.comment('/fluksio run lr=0.1');
    expect((await world.deliver(comment)).lastError).toBeNull();
    expect(world.reactions(comment.payload.comment.id)).toEqual(['eyes', 'rocket']);
    const run = await waitFor('the comment’s run', async () =>
      (await world.runs()).find((candidate) => candidate.trigger === 'comment'),
    );
    expect(run).toMatchObject({ commit: head, params: { lr: 0.1 }, status: 'queued' });
    await waitFor('the queued check run', () => checkRunOf(world, run.id)?.status === 'queued');

    runner = await startRunnerProcess({
      url: world.plane.url,
      token: runnerToken,
      workDir: runner.workDir,
      env: { GIT_SSL_CAINFO: double.caFile ?? '' },
    });
    const done = await finished(world, (candidate) => candidate.id === run.id, runner);
    expect(done, runner.output()).toMatchObject({ status: 'succeeded', metrics: { accuracy: 0.6 } });

    // Fetched over HTTP with a token for this one repository, revoked once fetched.
    const tokens = double.issuedTokens().filter((issued) => issued.repositoryIds !== null);
    expect(tokens).toHaveLength(2);
    for (const token of tokens) {
      expect(token).toMatchObject({ repositoryIds: [world.repo.id], permissions: { contents: 'read' } });
      expect(token.revokedAt).not.toBeNull();
      expect(runner.output()).not.toContain(token.token);
    }
    const runToken = tokens.at(-1);
    const fetches = double.gitFetches(world.repo.fullName).filter((fetch) => fetch.tokenId === runToken?.id);
    expect(fetches.length).toBeGreaterThan(0);
    expect(fetches.map((fetch) => fetch.status)).toEqual(fetches.map(() => 200));
    expect(runToken?.revokedAt?.getTime()).toBeLessThanOrEqual(done.finishedAt?.getTime() ?? 0);

    const checkRun = await waitFor('the completed check run', () => {
      const found = checkRunOf(world, run.id);
      return found?.status === 'completed' && found;
    });
    expect(double.checkRuns(world.repo.fullName).filter((each) => each.externalId === run.id)).toHaveLength(
      1,
    );
    expect(checkRun).toMatchObject({ name: 'fluksio', headSha: head, conclusion: 'success' });
    const statuses = checkRun.history.map((change) => change.body.status).filter(Boolean);
    expect(statuses.filter((status, index) => status !== statuses[index - 1])).toEqual([
      'queued',
      'in_progress',
      'completed',
    ]);
    const report = `${checkRun.output.summary ?? ''}\n${checkRun.output.text ?? ''}`;
    expect(report).toContain(head.slice(0, 7));
    expect(report).toMatch(/prepare[^\n]*cached[^\n]*/);
    expect(report).toContain(baseline.id);
    expect(report).toMatch(/train[^\n]*train\.py/);
    expect(report).toContain(`main @ ${main.slice(0, 7)} (merge-base)`);
    expect(report).toMatch(/accuracy[^\n]*0\.51[^\n]*0\.6[^\n]*\+0\.09/);
  } finally {
    await runner?.stop('SIGKILL');
    if (runner) await removeDir(runner.workDir);
    await world.close();
    await repo.cleanup();
  }
  expect(double.violations).toEqual([]);
});

/** Registers a runner for any of acme's repositories; its token. */
async function registerRunner(world: GitHubAppWorld): Promise<string> {
  const token = randomBytes(32).toString('hex');
  await createRunner({
    db: world.db,
    name: 'gpu-box',
    owner: 'acme',
    labels: [],
    repositories: [],
    tokenHash: hashToken(token),
  });
  return token;
}

const FAILING_TRAIN = `import sys
def train(lr):
    raise ValueError(f"lr {lr} diverged")
train(float(sys.argv[1]))
`;

/** Acceptance 7 with a real runner: the traceback's tail in the summary, its line annotated. */
test('a stage that raises: conclusion failure, the traceback’s tail in the summary, an annotation on the line that raised', async () => {
  const repo = await makeRepo({
    files: { 'fluksio.yml': PIPELINE, 'prepare.py': PREPARE, 'train.py': FAILING_TRAIN },
  });
  const main = (await repo.git('rev-parse', 'HEAD')).trim();
  const world = await openGitHubAppWorld({ serve: repo.dir });
  let runner: (FluksioProcess & { workDir: string }) | undefined;
  try {
    world.double.setFile(world.repo.fullName, main, 'fluksio.yml', PIPELINE);
    world.double.setCommits(world.repo.fullName, [main], { branch: 'main' });
    runner = await startRunnerProcess({
      url: world.plane.url,
      token: await registerRunner(world),
      env: { GIT_SSL_CAINFO: world.double.caFile ?? '' },
    });
    await world.deliver(pushPayload({ repo: world.repo, ref: 'main', after: main }));
    const run = await finished(world, (candidate) => candidate.commit === main, runner);
    expect(run.status).toBe('failed');
    const checkRun = await waitFor('the completed check run', () => {
      const found = checkRunOf(world, run.id);
      return found?.status === 'completed' && found;
    });
    expect(checkRun.conclusion).toBe('failure');
    const summary = checkRun.output.summary ?? '';
    expect(summary).toContain('Stage train failed');
    expect(summary).toMatch(/^Traceback:$/m);
    expect(summary).toMatch(
      /Traceback[^]*File "[^"]*train\.py", line 3, in train[^]*ValueError: lr 0\.01 diverged/,
    );
    expect(checkRun.annotations).toContainEqual(
      expect.objectContaining({
        path: 'train.py',
        start_line: 3,
        annotation_level: 'failure',
        message: expect.stringContaining('ValueError: lr 0.01 diverged') as unknown,
      }),
    );
  } finally {
    await runner?.stop('SIGKILL');
    if (runner) await removeDir(runner.workDir);
    await world.close();
    await repo.cleanup();
  }
  expect(world.double.violations).toEqual([]);
});

async function finished(
  world: GitHubAppWorld,
  which: (run: Run) => boolean,
  runner: FluksioProcess,
): Promise<Run> {
  return waitFor(
    'the run to finish',
    async () => {
      const run = (await world.runs()).find(which);
      return (
        run && ['succeeded', 'failed', 'cancelled', 'timed_out', 'abandoned'].includes(run.status) && run
      );
    },
    60_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${runner.output()}`);
  });
}

function checkRunOf(world: GitHubAppWorld, runId: string) {
  return world.double.checkRuns(world.repo.fullName).find((candidate) => candidate.externalId === runId);
}

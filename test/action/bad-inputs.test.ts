import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startGitHubDouble, type GitHubDouble } from '../github/github-double.js';
import { EXPERIMENT_FILES, HEAD_FILES, REPOSITORY } from './helpers/experiment.js';
import { makePullRequestWorkspace, type PullRequestWorkspace } from './helpers/pull-request-workspace.js';
import { logOf, NODE_RUNTIMES, runStep, type StepRun } from './helpers/run-bundled-action.js';

let double: GitHubDouble;
let pr: PullRequestWorkspace;

beforeEach(async () => {
  double = await startGitHubDouble();
  double.addRepository({ owner: 'octo-org', name: 'ml-project' });
  pr = await makePullRequestWorkspace({ files: EXPERIMENT_FILES, headFiles: HEAD_FILES });
});
afterEach(async () => {
  await double.close();
  await pr.cleanup();
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function step(node: string, inputs: Record<string, string>): Promise<StepRun> {
  return runStep('main', {
    node,
    workspace: pr.workspace,
    inputs: { 'github-token': 'ghs_unused', ...inputs },
    repository: REPOSITORY,
    eventName: 'pull_request',
    event: pr.pullRequestEvent(REPOSITORY),
    sha: pr.merge,
    apiUrl: double.url,
  });
}

/** The step failed with exactly this message, and nothing ran, was stored or reached GitHub. */
function expectRefused(run: StepRun, message: string | RegExp): void {
  expect(run.code, logOf(run)).toBe(1);
  const errors = run.commands.filter((command) => command.name === 'error').map((command) => command.value);
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatch(message);
  expect(run.outputs).toEqual({});
  expect(existsSync(join(pr.workspace, '.fluksio'))).toBe(false);
  expect(double.requests).toEqual([]);
}

describe.each(NODE_RUNTIMES)('bad input on $name', ({ path: node }) => {
  test('a param that is not of its type names the params input, and runs nothing', async () => {
    expectRefused(
      await step(node, { params: 'lr=fast' }),
      /^Input 'params': Parameter 'lr': "fast" is not a float \(e\.g\. lr=0\.5\)$/,
    );
  });

  test('a pipeline file that is not there names the pipeline input', async () => {
    expectRefused(
      await step(node, { pipeline: 'experiments/fluksio.yml' }),
      `Input 'pipeline': experiments/fluksio.yml does not exist in the workspace ${pr.workspace} (check the repository out first, with actions/checkout)`,
    );
  });

  test('a server that does not answer names the server input, and submits nothing', async () => {
    const server = `http://127.0.0.1:${await closedPort()}`;
    expectRefused(
      await step(node, { server, 'server-token': 'fxt_token' }),
      new RegExp(
        `^Input 'server': ${server} is not a fluksio control plane that answers \\(Could not reach the control plane at ${server} \\(GET /healthz\\): ECONNREFUSED \\(connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+\\)\\)$`,
      ),
    );
  });

  test('a server URL’s user name and password are never printed', async () => {
    const server = `http://127.0.0.1:${await closedPort()}`;
    const run = await step(node, {
      server: server.replace('http://', 'http://deploy:hunter2-in-the-url@'),
      'server-token': 'fxt_token',
    });
    expectRefused(
      run,
      `Input 'server': ${server} is not a fluksio control plane that answers (Could not reach the control plane at ${server} (GET /healthz): ECONNREFUSED (connect ${server.replace('http://', 'ECONNREFUSED ')}))`,
    );
    expect(run.stdout + run.stderr).not.toContain('hunter2-in-the-url');
  });
});

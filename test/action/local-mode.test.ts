import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startGitHubDouble, type GitHubDouble } from '../github/github-double.js';
import { EXPERIMENT_FILES, FAILING_LINE, HEAD_FILES, REPOSITORY } from './helpers/experiment.js';
import { mintInstallationToken } from './helpers/installation-token.js';
import { groupLines } from './helpers/job-log.js';
import { makePullRequestWorkspace, type PullRequestWorkspace } from './helpers/pull-request-workspace.js';
import { logOf, NODE_RUNTIMES, runStep, type StepOptions } from './helpers/run-bundled-action.js';

let cacheDir: string;
let double: GitHubDouble;
let installationId: number;
let pr: PullRequestWorkspace;

beforeAll(async () => {
  // The empty-store template is made once for the file, as on a self-hosted runner.
  cacheDir = await mkdtemp(join(tmpdir(), 'fluksio-action-cache-'));
});
afterAll(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});
beforeEach(async () => {
  double = await startGitHubDouble();
  installationId = double.addRepository({ owner: 'octo-org', name: 'ml-project' }).installationId;
  pr = await makePullRequestWorkspace({ files: EXPERIMENT_FILES, headFiles: HEAD_FILES });
});
afterEach(async () => {
  expect(double.violations).toEqual([]);
  await double.close();
  await pr.cleanup();
});

/** The step as a `pull_request` workflow runs it: GITHUB_SHA is GitHub's merge commit. */
function onPullRequest(node: string, token: string, inputs: Record<string, string> = {}): StepOptions {
  return {
    node,
    workspace: pr.workspace,
    inputs: { 'github-token': token, ...inputs },
    repository: REPOSITORY,
    eventName: 'pull_request',
    event: pr.pullRequestEvent(REPOSITORY),
    sha: pr.merge,
    apiUrl: double.url,
    env: { FLUKSIO_CACHE_DIR: cacheDir },
  };
}

describe.each(NODE_RUNTIMES)('local mode on $name', ({ path: node }) => {
  test('a pull request runs its merge commit against the base branch run in the cached store, reports on the head, and runs fully cached the second time', async () => {
    const token = await mintInstallationToken(double, installationId, { checks: 'write', contents: 'read' });

    // The push to main that the base branch's workflow ran: it leaves the baseline in .fluksio/.
    await pr.git('checkout', '-q', '--detach', pr.base);
    const onMain = await runStep('main', {
      ...onPullRequest(node, token),
      eventName: 'push',
      event: pr.pushEvent(REPOSITORY),
      sha: pr.base,
    });
    expect(onMain.code, logOf(onMain)).toBe(0);
    const baseRunId = onMain.outputs['run-id'] ?? '';

    await pr.git('checkout', '-q', '--detach', pr.merge);
    const first = await runStep('main', onPullRequest(node, token));
    expect(first.code, logOf(first)).toBe(0);

    // Outputs: the run, its metrics, and the summary that is also the step summary.
    const runId = first.outputs['run-id'] ?? '';
    expect(runId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(first.outputs.status).toBe('succeeded');
    const metrics = JSON.parse(first.outputs.metrics ?? '{}') as Record<string, number>;
    expect(metrics).toEqual({ loss: 0.015625, rows: 3 });
    expect(JSON.parse(first.outputs.runs ?? '[]')).toEqual([
      { id: runId, status: 'succeeded', params: { lr: 0.5, fail: 0 }, metrics, reason: null },
    ]);
    expect(first.summary.trim()).toBe(first.outputs.summary?.trim());
    // It stamps the merge commit, says so, and compares with the base branch's run.
    expect(first.summary).toContain(`\`${pr.merge}\``);
    expect(first.summary).toContain(`GitHub's merge of #7 (head ${pr.head.slice(0, 10)}) into main`);
    expect(first.summary).toContain(`Against main @ ${pr.base.slice(0, 7)}, run \`${baseRunId}\`.`);
    expect(first.summary).toMatch(/\| loss \| 0\.125 \| \*\*0\.015625\*\* \| −0\.109375 \| −87\.5% \| ✅ \|/);

    // Each stage's output is a group of its own; nothing a stage printed is a command.
    const groups = first.commands
      .filter((command) => command.name === 'group')
      .map((command) => command.value);
    expect(groups.sort()).toEqual(['prepare', 'probe', 'train']);
    expect(first.commands.some((command) => command.name === 'set-output')).toBe(false);
    expect(first.commands.filter((command) => command.name === 'error')).toEqual([]);
    expect(first.commands.some((command) => command.name === 'warning')).toBe(false);
    const probe = groupLines(first.stdout, 'probe');
    expect(probe).toContain('::error::x');
    expect(probe).toContain('::set-output name=a::b');
    // The stage's environment: allow-listed, so no input, token or runner credential.
    const environment = probe.join('\n');
    expect(environment).toContain('FLUKSIO_STAGE=probe');
    expect(environment).not.toContain(token);
    expect(environment).not.toMatch(/INPUT_|ACTIONS_|GITHUB_TOKEN|GITHUB_OUTPUT|GITHUB_STATE/);

    // The check run: on the pull request's head, naming the merge it ran.
    const checks = double.checkRuns(REPOSITORY);
    const check = checks.find((each) => each.externalId === runId);
    expect(check).toMatchObject({
      name: 'fluksio',
      headSha: pr.head,
      status: 'completed',
      conclusion: 'success',
    });
    expect(check?.output.summary).toContain(`GitHub's merge of #7`);
    // What stages print as ::warning/::error with a file becomes an annotation of the check run.
    expect(check?.annotations).toEqual([
      expect.objectContaining({
        path: 'train.py',
        start_line: 1,
        annotation_level: 'warning',
        message: 'look here',
      }),
    ]);
    expect(checks.find((each) => each.externalId === baseRunId)?.headSha).toBe(pr.base);

    // The same workspace again: every stage restored, the same numbers.
    const second = await runStep('main', onPullRequest(node, token));
    expect(second.code, logOf(second)).toBe(0);
    expect(second.outputs.metrics).toBe(first.outputs.metrics);
    expect(second.outputs['run-id']).not.toBe(runId);
    // prepare's inputs did not change on the pull request: it was restored from main's run already.
    expect(second.summary).toContain(`| prepare | ♻️ cached |`);
    for (const stage of ['train', 'probe']) {
      expect(second.summary).toMatch(
        new RegExp(`\\| ${stage} \\| ♻️ cached \\| [^|]+ \\| from run \`${runId}\` \\|`),
      );
    }
    expect(second.stdout).not.toContain('::metric');
  }, 240_000);

  test('a failing stage fails the step with its traceback’s last line, annotated at the line', async () => {
    const token = await mintInstallationToken(double, installationId, { checks: 'write' });
    const step = await runStep('main', onPullRequest(node, token, { params: 'fail=1 lr=0.25' }));
    expect(step.code, logOf(step)).toBe(1);
    expect(step.outputs.status).toBe('failed');
    const errors = step.commands.filter((command) => command.name === 'error');
    expect(errors).toEqual([
      {
        name: 'error',
        properties: { title: 'fluksio: train', file: 'train.py', line: String(FAILING_LINE) },
        value: 'Stage train failed: exited with code 1: ZeroDivisionError: division by zero',
      },
      expect.objectContaining({ properties: {} }),
    ]);
    expect(errors[1]?.value).toMatch(
      /^Run \w+ failed: Stage train failed: exited with code 1: ZeroDivisionError: division by zero$/,
    );
    expect(step.summary).toContain('### ❌ Stage train failed');
    expect(step.summary).toContain('ZeroDivisionError: division by zero');
    const [check] = double.checkRuns(REPOSITORY);
    expect(check).toMatchObject({ headSha: pr.head, conclusion: 'failure' });
    expect(check?.annotations).toContainEqual(
      expect.objectContaining({ path: 'train.py', start_line: FAILING_LINE, annotation_level: 'failure' }),
    );
  }, 240_000);

  test('a token that may not write checks is a warning, and with no base branch run in the store the summary says there is no baseline', async () => {
    const token = await mintInstallationToken(double, installationId, { checks: 'read', contents: 'read' });
    const step = await runStep('main', onPullRequest(node, token, { 'check-name': 'experiment' }));
    expect(step.code, logOf(step)).toBe(0);
    expect(step.outputs.status).toBe('succeeded');
    const warnings = step.commands.filter((command) => command.name === 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.value).toContain('permissions: checks: write');
    expect(double.checkRuns(REPOSITORY)).toEqual([]);
    // GitHub refused the request; the double records that, and here it is what the test wants.
    expect(double.violations.map((violation) => [violation.kind, violation.path])).toEqual([
      ['authorization', `/repos/${REPOSITORY}/check-runs`],
    ]);
    double.violations.splice(0);
    expect(step.summary).toContain(
      'No baseline: the cached store (.fluksio/) has no successful run of this pipeline on main at or before this pull request',
    );
  }, 240_000);

  test('cancelling the workflow stops the running stage and fails the step with the run cancelled', async () => {
    const sleepy = await makePullRequestWorkspace({
      files: {
        'fluksio.yml': `version: 1
stages:
  wait:
    cmd: echo $$ > sleeper.pid && echo started && exec sleep 120
`,
        '.gitignore': 'sleeper.pid\n',
      },
      headFiles: { 'notes.md': 'a change\n' },
    });
    try {
      const step = await runStep('main', {
        ...onPullRequest(node, ''),
        workspace: sleepy.workspace,
        event: sleepy.pullRequestEvent(REPOSITORY),
        sha: sleepy.merge,
        started: (child, output) => {
          const timer = setInterval(() => {
            if (output().includes('\nstarted\n')) {
              clearInterval(timer);
              child.kill('SIGINT');
            }
          }, 50);
        },
      });
      expect(step.code, logOf(step)).toBe(1);
      expect(step.outputs.status).toBe('cancelled');
      expect(step.commands.at(-1)?.value).toMatch(/^Run \w+ cancelled: The run was cancelled$/);
      const pid = Number(await readFile(join(sleepy.workspace, 'sleeper.pid'), 'utf8'));
      expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      await sleepy.cleanup();
    }
  }, 240_000);
});

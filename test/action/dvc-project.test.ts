import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startGitHubDouble, type GitHubDouble } from '../github/github-double.js';
import { committedFiles } from '../helpers/committed-files.js';
import { REPOSITORY } from './helpers/experiment.js';
import { mintInstallationToken } from './helpers/installation-token.js';
import { makePullRequestWorkspace, type PullRequestWorkspace } from './helpers/pull-request-workspace.js';
import { logOf, NODE_RUNTIMES, runStep } from './helpers/run-bundled-action.js';

const EXAMPLE = committedFiles(join(import.meta.dirname, '../../examples/dvc-get-started'));

/** examples/dvc-get-started, with one more stage fluksio cannot honour (its out is on S3). */
const DVC_FILES: Record<string, string> = {
  ...EXAMPLE,
  'dvc.yaml': `${EXAMPLE['dvc.yaml'] ?? ''}  upload:
    cmd: aws s3 cp model.json s3://bucket/model.json
    deps:
      - model.json
    outs:
      - s3://bucket/model.json
`,
};

let double: GitHubDouble;
let installationId: number;
let pr: PullRequestWorkspace;

beforeEach(async () => {
  double = await startGitHubDouble();
  installationId = double.addRepository({ owner: 'octo-org', name: 'ml-project' }).installationId;
});
afterEach(async () => {
  expect(double.violations).toEqual([]);
  await double.close();
  await pr.cleanup();
});

describe.each(NODE_RUNTIMES)('a DVC project on $name', ({ path: node }) => {
  test('with no pipeline input the action runs dvc.yaml as fluksio run does: a DVC-named param typed from params.yaml, a stage per group, the stage it cannot honour a warning, the check run success', async () => {
    pr = await makePullRequestWorkspace({ files: DVC_FILES, headFiles: { 'notes.md': 'a change\n' } });
    const token = await mintInstallationToken(double, installationId, { checks: 'write', contents: 'read' });
    const step = await runStep('main', {
      node,
      workspace: pr.workspace,
      // The runner passes action.yml's default for an input the workflow does not set.
      inputs: { 'github-token': token, pipeline: '', params: 'featurize.max_features=400' },
      repository: REPOSITORY,
      eventName: 'pull_request',
      event: pr.pullRequestEvent(REPOSITORY),
      sha: pr.merge,
      apiUrl: double.url,
    });
    expect(step.code, logOf(step)).toBe(0);
    expect(step.outputs.status).toBe('succeeded');
    const [run] = JSON.parse(step.outputs.runs ?? '[]') as { params: Record<string, unknown> }[];
    expect(run?.params).toMatchObject({ 'featurize.max_features': 400, 'featurize.ngrams': 1 });
    expect(Object.keys(JSON.parse(step.outputs.metrics ?? '{}') as object).sort()).toEqual([
      'avg_prec',
      'roc_auc',
    ]);
    const groups = step.commands
      .filter((command) => command.name === 'group')
      .map((command) => command.value);
    expect(groups.sort()).toEqual(['evaluate', 'featurize', 'prepare', 'train']);
    expect(step.commands.filter((command) => command.name === 'warning')).toEqual([
      {
        name: 'warning',
        properties: { title: 'Not honoured', file: 'dvc.yaml' },
        value: expect.stringMatching(
          /^stage upload: cannot be honoured \(s3:\/\/bucket\/model\.json /,
        ) as unknown,
      },
    ]);
    expect(double.checkRuns(REPOSITORY)).toMatchObject([
      { name: 'fluksio', headSha: pr.head, status: 'completed', conclusion: 'success' },
    ]);
    expect(existsSync(join(pr.workspace, '.dvc'))).toBe(false);
  }, 240_000);

  test('with no pipeline input and neither fluksio.yml nor dvc.yaml, the step names the pipeline input and runs nothing', async () => {
    pr = await makePullRequestWorkspace({ files: { 'params.yaml': 'lr: 0.1\n' }, headFiles: {} });
    const step = await runStep('main', {
      node,
      workspace: pr.workspace,
      inputs: { 'github-token': 'ghs_unused', pipeline: '' },
      repository: REPOSITORY,
      eventName: 'pull_request',
      event: pr.pullRequestEvent(REPOSITORY),
      sha: pr.merge,
      apiUrl: double.url,
    });
    expect(step.code, logOf(step)).toBe(1);
    expect(
      step.commands.filter((command) => command.name === 'error').map((command) => command.value),
    ).toEqual([
      `Input 'pipeline': neither fluksio.yml nor dvc.yaml is in the workspace ${pr.workspace} (check the repository out first, with actions/checkout, or name the pipeline file)`,
    ]);
    expect(existsSync(join(pr.workspace, '.fluksio'))).toBe(false);
    expect(double.requests).toEqual([]);
  });
});

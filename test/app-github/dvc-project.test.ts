import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { removeDir, startRunnerProcess } from '../helpers/control-plane-processes.js';
import { committedFiles } from '../helpers/committed-files.js';
import type { FluksioProcess } from '../helpers/fluksio-process.js';
import { makeRepo } from '../helpers/make-repo.js';
import {
  closeGitHubAppDatabase,
  completedCheckRun,
  openGitHubAppDatabase,
  openGitHubAppWorld,
  registerAcmeRunner,
  waitFor,
  type GitHubAppWorld,
} from './github-app-fixture.js';

const EXAMPLE = join(import.meta.dirname, '../../examples/dvc-get-started');

/** A commit with a DVC project and no fluksio.yml. */
const DVC_HEAD = 'e5f6a7b8'.repeat(5);

beforeAll(openGitHubAppDatabase);
afterAll(closeGitHubAppDatabase);

/** Puts `files` at `sha` in the double (nothing else is there) and makes it the pull request's head. */
function headWith(world: GitHubAppWorld, sha: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files))
    world.double.setFile(world.repo.fullName, sha, path, content);
  world.setHead(sha);
}

/** The paths the App asked the contents API for, each with the ref it asked at. */
function contentsRead(world: GitHubAppWorld): string[] {
  return world.double.requests
    .filter((request) => request.operationId === 'repos/get-content')
    .map(
      (request) => `${decodeURIComponent(request.path.split('/contents/')[1] ?? '')}@${request.query.ref}`,
    );
}

test('/fluksio run featurize.max_features=400 on a DVC project: dvc.yaml, params.yaml and its vars file read at the head through the API, the run records dvc.yaml, the param typed from params.yaml, the stage it cannot honour named', async () => {
  const world = await openGitHubAppWorld();
  try {
    headWith(world, DVC_HEAD, {
      'dvc.yaml': [
        'vars:',
        '  - config.yaml',
        'stages:',
        '  featurize:',
        '    cmd: python3 featurize.py ${featurize.max_features} ${data_dir}',
        '    deps: [featurize.py]',
        '    params: [featurize.max_features, featurize.ngrams]',
        '    outs:',
        '      - ${data_dir}/features',
        '  upload:',
        '    cmd: aws s3 cp --recursive ${data_dir}/features s3://bucket/features',
        '    deps:',
        '      - ${data_dir}/features',
        '    outs:',
        '      - s3://bucket/features',
        '',
      ].join('\n'),
      'params.yaml': 'featurize:\n  max_features: 100\n  ngrams: 1\n',
      'config.yaml': 'data_dir: data\n',
    });
    const comment = world.comment('/fluksio run featurize.max_features=400');
    expect((await world.deliver(comment)).lastError).toBeNull();
    const [run, ...others] = await world.runs();
    expect(others).toEqual([]);
    expect(run).toMatchObject({
      commit: DVC_HEAD,
      pipelinePath: 'dvc.yaml',
      params: { 'featurize.max_features': 400, 'featurize.ngrams': 1 },
      status: 'queued',
      labels: [],
    });
    expect(world.reactions(comment.payload.comment.id)).toEqual(['eyes', 'rocket']);
    expect(world.replies()[0]).toContain('🚀 Queued 1 run');
    // What cannot be honoured is named with its stage; the rest runs.
    expect(world.replies()[0]).toMatch(
      /Not honoured[^]*stage upload: cannot be honoured \(s3:\/\/bucket\/features /,
    );
    // fluksio.yml first; then the DVC project, every file at the head's exact SHA.
    expect(new Set(contentsRead(world))).toEqual(
      new Set(['fluksio.yml', 'dvc.yaml', 'params.yaml', 'config.yaml'].map((path) => `${path}@${DVC_HEAD}`)),
    );

    const untyped = world.comment('/fluksio run featurize.max_features=many');
    await world.deliver(untyped);
    expect(await world.runs()).toHaveLength(1);
    expect(world.reactions(untyped.payload.comment.id)).toEqual(['eyes', 'confused']);
    expect(world.replies()[1]).toContain(`Parameter 'featurize.max_features': "many" is not an int`);
    expect(world.replies()[1]).toContain('featurize.max_features (int, default 100)');
  } finally {
    await world.close();
  }
  expect(world.double.violations).toEqual([]);
});

test('a broken dvc.yaml: a reply and an action_required check run naming every problem under dvc.yaml, no run', async () => {
  const world = await openGitHubAppWorld();
  try {
    headWith(world, DVC_HEAD, {
      'dvc.yaml': [
        'vars: [missing.yaml, ../outside.yaml]',
        'stages:',
        '  train:',
        '    cmd: python3 train.py',
        '    outz: [model.pkl]',
        '  featurize:',
        '    cmd: python3 featurize.py',
        '    params: [featurize.nope]',
        '',
      ].join('\n'),
      'params.yaml': 'featurize:\n  max_features: 100\n',
    });
    const comment = world.comment('/fluksio run');
    await world.deliver(comment);
    expect(await world.runs()).toEqual([]);
    expect(world.reactions(comment.payload.comment.id)).toEqual(['eyes', 'confused']);
    const problems = [
      'dvc.yaml: vars[0]: missing.yaml does not exist',
      'dvc.yaml: vars[1]: ../outside.yaml is outside the repository: expected a path relative to dvc.yaml, inside it',
      'dvc.yaml: stages.train: unknown key "outz"',
      'dvc.yaml: stages.featurize.params[0]: "featurize.nope" is not in params.yaml',
    ];
    for (const problem of problems) expect(world.replies()[0]).toContain(problem);
    expect(world.replies()[0]).not.toContain('fluksio.yml:');
    // A file outside the repository is refused unread: GitHub is never asked for it.
    expect(contentsRead(world).filter((read) => read.includes('outside'))).toEqual([]);

    const [notice] = await world.notices();
    expect(notice).toMatchObject({ kind: 'broken-pipeline', headSha: DVC_HEAD, body: { path: 'dvc.yaml' } });
    const checkRun = await waitFor('the action_required check run', () =>
      world.double
        .checkRuns(world.repo.fullName)
        .find((candidate) => candidate.headSha === DVC_HEAD && candidate.status === 'completed'),
    );
    expect(checkRun).toMatchObject({
      conclusion: 'action_required',
      output: { title: 'dvc.yaml has 4 problems' },
    });
    for (const problem of problems) expect(checkRun.output.summary).toContain(problem);
  } finally {
    await world.close();
  }
  expect(world.double.violations).toEqual([]);
});

test('a head with neither fluksio.yml nor dvc.yaml: the reply names both, and nothing runs', async () => {
  const world = await openGitHubAppWorld();
  try {
    headWith(world, DVC_HEAD, { 'params.yaml': 'lr: 0.1\n' });
    await world.deliver(world.comment('/fluksio run'));
    expect(await world.runs()).toEqual([]);
    expect(world.replies()[0]).toContain(
      `There is no fluksio.yml nor dvc.yaml at ${DVC_HEAD}, so there is nothing to run`,
    );
  } finally {
    await world.close();
  }
  expect(world.double.violations).toEqual([]);
});

/**
 * The DVC acceptance through the App: examples/dvc-get-started committed unchanged
 * (no fluksio.yml), a `/fluksio run featurize.max_features=400` on its pull request, a real
 * `fluksio runner` process fetching the head from the double and loading the dvc.yaml the
 * run names; the check run ends success and shows the four stages of dvc.yaml. Its python
 * stages take a while on a loaded machine, hence the longer limit.
 */
test('a DVC project run from a comment by a real runner: the check run is final, success, with the stages of dvc.yaml', async () => {
  const files = committedFiles(EXAMPLE);
  const repo = await makeRepo({ files });
  const head = (await repo.git('rev-parse', 'HEAD')).trim();
  const world = await openGitHubAppWorld({ serve: repo.dir });
  let runner: (FluksioProcess & { workDir: string }) | undefined;
  try {
    headWith(world, head, files);
    world.double.setCommits(world.repo.fullName, [head]);
    runner = await startRunnerProcess({
      url: world.plane.url,
      token: await registerAcmeRunner(world, []),
      env: { GIT_SSL_CAINFO: world.double.caFile ?? '' },
    });
    const comment = world.comment('/fluksio run featurize.max_features=400');
    expect((await world.deliver(comment)).lastError).toBeNull();
    const [queued] = await world.runs();
    expect(queued).toMatchObject({ pipelinePath: 'dvc.yaml', params: { 'featurize.max_features': 400 } });
    const active = runner;
    const done = await waitFor(
      'the run to finish',
      async () => {
        const run = (await world.runs()).find((candidate) => candidate.id === queued?.id);
        return run && !['queued', 'running'].includes(run.status) && run;
      },
      120_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${active.output()}`);
    });
    expect(done, runner.output()).toMatchObject({
      status: 'succeeded',
      pipelinePath: 'dvc.yaml',
      params: { 'featurize.max_features': 400, 'featurize.ngrams': 1, 'prepare.split': 0.2 },
    });
    expect(Object.keys(done.metrics ?? {}).sort()).toEqual(['avg_prec', 'roc_auc']);

    const checkRun = await completedCheckRun(world, done.id);
    expect(checkRun).toMatchObject({ name: 'fluksio', headSha: head, conclusion: 'success' });
    const report = `${checkRun.output.summary ?? ''}\n${checkRun.output.text ?? ''}`;
    expect(report).toContain('`dvc.yaml`');
    for (const stage of ['prepare', 'featurize', 'train', 'evaluate'])
      expect(report).toMatch(new RegExp(`\\b${stage}\\b[^\\n]*\\bran\\b`));
  } finally {
    await runner?.stop('SIGKILL');
    if (runner) await removeDir(runner.workDir);
    await world.close();
    await repo.cleanup();
  }
  expect(world.double.violations).toEqual([]);
}, 180_000);

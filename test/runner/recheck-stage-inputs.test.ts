import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { readCodeIndex } from '../../runner/keys/code-index.js';
import { chownTree } from '../../runner/sandbox/chown-tree.js';
import { CodeView } from '../../runner/keys/code-view.js';
import { recheckStageInputs } from '../../runner/keys/recheck-stage-inputs.js';
import { stageKeyInputs } from '../../runner/keys/stage-key-inputs.js';
import type { Workspace } from '../../runner/workspace/workspace.js';
import { validatePipeline } from '../../core/pipeline/validate-pipeline.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

/** No stage here has a directory out: a manifest is never asked for. */
const noManifest = () => Promise.reject(new Error('no directory out here'));

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const PIPELINE = `version: 1
stages:
  train:
    cmd: python3 train.py
    deps: [train.py, data.csv]
    outs: [model.txt]
  report:
    cmd: python3 report.py
    deps: [report.py]
    outs: [report.txt]
    code: false
`;

async function project() {
  repo = await makeRepo({
    files: {
      'fluksio.yml': PIPELINE,
      'train.py': 'print(1)\n',
      'report.py': 'print(2)\n',
      'data.csv': '1\n',
      'helpers.py': 'X = 1\n',
      '.gitignore': '/model.txt\n/report.txt\n',
    },
  });
  const { pipeline } = validatePipeline(PIPELINE, { pipelineDir: '', exists: () => true });
  if (!pipeline) throw new Error('the test pipeline does not validate');
  const workspace: Workspace = { repoRoot: repo.dir, pipelineDir: repo.dir, pipelineDirInRepo: '' };
  const before = await readCodeIndex(repo.dir);
  const keyOf = (stage: string) =>
    stageKeyInputs({
      workspace,
      pipeline,
      stage,
      params: {},
      codeIndex: before,
      env: {},
      interpreters: {},
      commandPath: undefined,
      fingerprint: null,
      produced: new Map(),
    });
  // The keys are what the stages started with, before the test's edits.
  const materials = { train: await keyOf('train'), report: await keyOf('report') };
  const recheck = async (stage: 'train' | 'report') =>
    recheckStageInputs({
      stage,
      pipeline,
      workspace,
      material: materials[stage],
      produced: new Map(),
      readManifest: noManifest,
      before,
      after: await readCodeIndex(repo.dir),
    });
  return { recheck };
}

test('nothing changed while the stage ran: nothing to say', async () => {
  const { recheck } = await project();
  await repo.write('model.txt', 'an out is a product, not a change\n');
  expect(await recheck('train')).toEqual({ stageDirty: [], runDirty: [], warnings: [] });
});

test('a dep and a code file edited while the stage ran are both named, for the stage and the run', async () => {
  const { recheck } = await project();
  await repo.write('data.csv', '2\n');
  await repo.write('helpers.py', 'X = 2\n');
  expect(await recheck('train')).toEqual({
    stageDirty: ['data.csv changed while train ran', 'code changed while train ran: helpers.py changed'],
    runDirty: [
      'data.csv changed while train ran',
      'code changed while train ran: data.csv changed, helpers.py changed',
    ],
    warnings: [],
  });
});

test("a change outside the stage's key leaves its result alone but makes the run dirty", async () => {
  const { recheck } = await project();
  await repo.write('helpers.py', 'X = 2\n');
  expect(await recheck('report')).toEqual({
    stageDirty: [],
    runDirty: ['code changed while report ran: helpers.py changed'],
    warnings: [],
  });
});

test('a dep put back to its old bytes while the stage ran is named as rewritten: the stage may have read the edit', async () => {
  const { recheck } = await project();
  await repo.write('data.csv', '2\n');
  await repo.git('checkout', '--', 'data.csv');
  expect(await recheck('train')).toMatchObject({ stageDirty: ['data.csv was rewritten while train ran'] });
});

test('a code file put back to its old bytes while the stage ran is named as rewritten: the stage may have run the edit', async () => {
  const { recheck } = await project();
  // As `sed -i` writes: another file renamed over it, so another inode.
  await repo.write('helpers.tmp', 'X = 1\n');
  await rename(join(repo.dir, 'helpers.tmp'), join(repo.dir, 'helpers.py'));
  expect(await recheck('train')).toEqual({
    stageDirty: ['helpers.py was rewritten while train ran'],
    runDirty: ['helpers.py was rewritten while train ran'],
    warnings: [],
  });
  // Outside the key of a `code: false` stage: only the run cannot claim its code.
  expect(await recheck('report')).toMatchObject({
    stageDirty: [],
    runDirty: ['helpers.py was rewritten while report ran'],
  });
});

test('handing the checkout to a stage user, which changes only ctimes, is no rewrite', async () => {
  const { recheck } = await project();
  // What a runner with --stage-user does before each stage (StageUserLauncher), and when
  // it takes the checkout back (reclaimCheckout); git refuses a tree of another owner.
  chownTree(repo.dir, 4242, 4242);
  chownTree(repo.dir, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
  expect(await recheck('train')).toEqual({ stageDirty: [], runDirty: [], warnings: [] });
});

test('a tracked dep rewritten is named once for the run', async () => {
  const { recheck } = await project();
  await repo.write('data.tmp', '1\n');
  await rename(join(repo.dir, 'data.tmp'), join(repo.dir, 'data.csv'));
  expect(await recheck('train')).toEqual({
    stageDirty: ['data.csv was rewritten while train ran'],
    runDirty: ['data.csv was rewritten while train ran'],
    warnings: [],
  });
});

test('a DVC params file the runner overlays and puts back is no rewrite; another code file still is', async () => {
  const pipelineText = `version: 1
dvc_params: true
params:
  lr: { type: float, default: 0.1 }
stages:
  train:
    cmd: sh train.sh
    params: [lr]
    outs: [model.txt]
`;
  repo = await makeRepo({
    files: {
      'fluksio.yml': pipelineText,
      'params.yaml': 'lr: 0.1\n',
      'train.sh': 'echo 1\n',
      '.gitignore': '/model.txt\n',
    },
  });
  const { pipeline } = validatePipeline(pipelineText, { pipelineDir: '', exists: () => true });
  if (!pipeline) throw new Error('the test pipeline does not validate');
  const workspace: Workspace = { repoRoot: repo.dir, pipelineDir: repo.dir, pipelineDirInRepo: '' };
  const before = await readCodeIndex(repo.dir);
  const material = await stageKeyInputs({
    workspace,
    pipeline,
    stage: 'train',
    params: { lr: 0.1 },
    codeIndex: before,
    env: {},
    interpreters: {},
    commandPath: undefined,
    fingerprint: null,
    produced: new Map(),
  });
  const recheck = async () =>
    recheckStageInputs({
      stage: 'train',
      pipeline,
      workspace,
      material,
      produced: new Map(),
      readManifest: noManifest,
      before,
      after: await readCodeIndex(repo.dir),
    });
  // What overlayDvcParamsFiles does for lr=0.5, and its restore.
  await repo.write('params.yaml', 'lr: 0.5\n');
  await repo.write('params.tmp', 'lr: 0.1\n');
  await rename(join(repo.dir, 'params.tmp'), join(repo.dir, 'params.yaml'));
  expect(await recheck()).toEqual({ stageDirty: [], runDirty: [], warnings: [] });
  await repo.write('train.tmp', 'echo 1\n');
  await rename(join(repo.dir, 'train.tmp'), join(repo.dir, 'train.sh'));
  expect((await recheck()).stageDirty).toEqual(['train.sh was rewritten while train ran']);
});

test('a deleted dep is named as deleted', async () => {
  const { recheck } = await project();
  await repo.git('rm', '-q', 'data.csv');
  expect((await recheck('train')).stageDirty).toContain('data.csv was deleted while train ran');
});

test('files that appeared and are neither outs nor ignored are named once, with the fix', async () => {
  const { recheck } = await project();
  for (const name of ['a.log', 'b.log', 'c.log', 'd.log', 'e.log', 'f.log', 'g.log']) {
    await repo.write(`logs/${name}`, name);
  }
  const { warnings, stageDirty } = await recheck('train');
  expect(warnings).toEqual([
    'train wrote logs/a.log, logs/b.log, logs/c.log, logs/d.log, logs/e.log and 2 more files (or they changed while it ran), ' +
      "which are neither an out nor ignored: declare them in train's outs, or add them to .gitignore — " +
      'otherwise every later run is dirty and misses the cache',
  ]);
  expect(stageDirty).toEqual([
    'code changed while train ran: logs/a.log added, logs/b.log added, logs/c.log added, logs/d.log added, logs/e.log added, and 2 more files',
  ]);
});

test('the code view asks git again only once a stage process may have changed the tree', async () => {
  repo = await makeRepo({ files: { 'a.py': '1\n' } });
  const view = new CodeView(repo.dir, await readCodeIndex(repo.dir));
  const first = await view.fresh();
  await repo.write('b.py', '2\n');
  // No process ran since: the run's view stands (an edit now is as if made after the run).
  expect(await view.fresh()).toBe(first);
  const ended = view.processStarted();
  ended();
  const after = await view.fresh();
  expect(after.files.has('b.py')).toBe(true);
  expect(await view.fresh()).toBe(after);
});

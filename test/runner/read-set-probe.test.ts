import { lchown, rename, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { readCodeIndex } from '../../runner/keys/code-index.js';
import { ReadSetProbe } from '../../runner/keys/read-set-probe.js';
import { chownTree } from '../../runner/sandbox/chown-tree.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

/** The uid and gid of `nobody`: another user the checkout can be handed to. */
const OTHER = 65534;
const asRoot = process.getuid?.() === 0;

/** The code index of a fresh repository, and a probe over it, as a run starts. */
async function startRun(files: Record<string, string>) {
  repo = await makeRepo({ files });
  const codeIndex = await readCodeIndex(repo.dir, { statCacheFile: null });
  const probe = new ReadSetProbe({ codeIndex, stages: {}, show: (repoPath) => repoPath });
  const now = Date.now();
  const record = (files: string[]) =>
    probe.record({ files, dirs: [], moduleDirs: [], lookups: {}, untraced: null }, [], {
      stage: now,
      run: now,
    });
  return { record };
}

test.skipIf(!asRoot)(
  'a checkout handed to the stage user after the code index was read (a chown: ctime only) is no change of what a stage read',
  async () => {
    const { record } = await startRun({ 'conf/x.json': '{"scale": 2}\n', 'train.py': 'print(1)\n' });
    chownTree(repo.dir, OTHER, OTHER);
    const recorded = await record(['conf/x.json', 'train.py']);
    expect(recorded.changedWhileRunning).toEqual([]);
    expect(Object.keys(recorded.readSet.files)).toEqual(['conf/x.json', 'train.py']);
  },
);

test('a file of the code index rewritten while the run ran, keeping its size, or swapped for an older file, is a change; one only handed to another user is not', async () => {
  const { record } = await startRun({
    'conf/x.json': '{"scale": 2}\n',
    'conf/y.json': '{"scale": 3}\n',
    'conf/z.json': '{"scale": 4}\n',
  });
  await writeFile(path.join(repo.dir, 'conf/x.json'), '{"scale": 5}\n');
  // Another file of the same size, older than the run: its times are not after the run's start.
  const older = path.join(repo.dir, 'older.json');
  await writeFile(older, '{"scale": 6}\n');
  await utimes(older, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  await rename(older, path.join(repo.dir, 'conf/y.json'));
  if (asRoot) await lchown(path.join(repo.dir, 'conf/z.json'), OTHER, OTHER);
  const recorded = await record(['conf/x.json', 'conf/y.json', 'conf/z.json']);
  expect(recorded.changedWhileRunning).toEqual(['conf/x.json', 'conf/y.json']);
});

test('a listing that hides outs of other stages the stage does not declare is named; a folder it depends on, its own outs, or outs a listing shows are not', async () => {
  repo = await makeRepo({ files: { 'results/README.md': 'tracked\n', 'train.py': 'print(1)\n' } });
  const codeIndex = await readCodeIndex(repo.dir, { statCacheFile: null });
  const stages = {
    summarize: { deps: ['results/a.json'], outs: ['results/summary.txt'] },
    a: { deps: [], outs: ['results/a.json'] },
    b: { deps: [], outs: ['results/b.json', 'deep/x/b.json'] },
    gen: { deps: [], outs: ['gen.py', 'report'] },
    declares: { deps: ['deep', 'results/b.json', 'report/out.txt'], outs: [] },
  };
  const probe = new ReadSetProbe({ codeIndex, stages, show: (repoPath) => repoPath });
  const listing = (dirs: string[], moduleDirs: string[] = []) => ({
    files: {},
    dirs: Object.fromEntries(dirs.map((dir) => [dir, 'digest'])),
    moduleDirs: Object.fromEntries(moduleDirs.map((dir) => [dir, 'digest'])),
  });

  expect(probe.undeclaredOutsListed(listing(['results']), 'summarize')).toEqual([
    'lists results/, which holds outs of b (results/b.json) it does not declare',
  ]);
  // results/ holds a tracked file, so the root's listing shows it: only deep/, report/ and gen.py hide outs.
  expect(probe.undeclaredOutsListed(listing(['.']), 'summarize')).toEqual([
    "lists the pipeline's folder, which holds outs of b (deep/x/b.json) and gen (gen.py, report) it does not declare",
  ]);
  // The import system's listing keys module names: only an out that is a module counts.
  expect(probe.undeclaredOutsListed(listing([], ['.']), 'summarize')).toEqual([
    "lists the pipeline's folder, which holds outs of gen (gen.py) it does not declare",
  ]);
  // A folder holding them, the out itself, or a part of a folder out declared as a dep.
  expect(probe.undeclaredOutsListed(listing(['results', 'deep', 'report']), 'declares')).toEqual([
    'lists results/, which holds outs of summarize (results/summary.txt) and a (results/a.json) it does not declare',
  ]);
  // Its own outs, and a listing inside another stage's folder of outs, which shows every entry.
  expect(probe.undeclaredOutsListed(listing(['results', 'deep/x']), 'b')).toEqual([
    'lists results/, which holds outs of summarize (results/summary.txt) and a (results/a.json) it does not declare',
  ]);
});

test('outs of a stage upstream of it, through a chain of deps, are always there when it lists: not named', async () => {
  repo = await makeRepo({ files: { 'prepare.py': 'print(1)\n' } });
  const codeIndex = await readCodeIndex(repo.dir, { statCacheFile: null });
  const stages = {
    prepare: { deps: ['prepare.py'], outs: ['features.csv'] },
    train: { deps: ['features.csv'], outs: ['model.pkl'] },
    evaluate: { deps: ['model.pkl'], outs: ['metrics.json'] },
    sideline: { deps: [], outs: ['other.csv'] },
  };
  const probe = new ReadSetProbe({ codeIndex, stages, show: (repoPath) => repoPath });
  const listing = { files: {}, dirs: { '.': 'digest' }, moduleDirs: {} };
  // features.csv comes from prepare, upstream of evaluate only through train; other.csv
  // from a stage that may run before it or after.
  expect(probe.undeclaredOutsListed(listing, 'evaluate')).toEqual([
    "lists the pipeline's folder, which holds outs of sideline (other.csv) it does not declare",
  ]);
  // Downstream outs count: whether a run left them there is not the stage's to know.
  expect(probe.undeclaredOutsListed(listing, 'prepare')).toEqual([
    "lists the pipeline's folder, which holds outs of train (model.pkl), evaluate (metrics.json) and sideline (other.csv) it does not declare",
  ]);
});

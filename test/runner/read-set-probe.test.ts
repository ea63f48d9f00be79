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
  const probe = new ReadSetProbe({ codeIndex, outs: [], show: (repoPath) => repoPath });
  const now = Date.now();
  const record = (files: string[]) =>
    probe.record({ files, dirs: [], moduleDirs: [], untraced: null }, [], { stage: now, run: now });
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

import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { currentBranch } from '../../runner/workspace/current-branch.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

const repos: TestRepo[] = [];
afterEach(async () => {
  await Promise.all(repos.splice(0).map((repo) => repo.cleanup()));
});

async function repo(): Promise<TestRepo> {
  const made = await makeRepo({ files: { 'a.txt': 'a\n' } });
  repos.push(made);
  return made;
}

test('the branch checked out, with its slashes; none when HEAD is detached', async () => {
  const made = await repo();
  await made.git('checkout', '-q', '-b', 'feature/lr');
  expect(await currentBranch(made.dir)).toBe('feature/lr');
  await made.git('checkout', '-q', '--detach');
  expect(await currentBranch(made.dir)).toBeNull();
});

test("a linked worktree's own branch, not its main work tree's", async () => {
  const made = await repo();
  const main = await currentBranch(made.dir);
  const linked = path.join(made.dir, '..', `${path.basename(made.dir)}-linked`);
  await made.git('worktree', 'add', '-q', '-b', 'sweep/two', linked);
  try {
    expect(await currentBranch(linked)).toBe('sweep/two');
    expect(await currentBranch(made.dir)).toBe(main);
  } finally {
    await made.git('worktree', 'remove', '--force', linked);
  }
});

test('an unborn branch (no commit yet) is still the branch', async () => {
  const made = await repo();
  await made.git('checkout', '-q', '--orphan', 'fresh');
  await writeFile(path.join(made.dir, 'b.txt'), 'b\n');
  expect(await currentBranch(made.dir)).toBe('fresh');
});

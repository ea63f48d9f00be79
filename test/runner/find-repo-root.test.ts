import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { findRepoRoot } from '../../runner/find-repo-root.js';
import { NotAGitRepositoryError } from '../../runner/not-a-git-repository-error.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

let repo: TestRepo | null = null;
const cleanups: string[] = [];
afterEach(async () => {
  await repo?.cleanup();
  repo = null;
  for (const dir of cleanups.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** What git itself answers for `dir`. */
function gitTopLevel(dir: string): string {
  return execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: dir, encoding: 'utf8' }).trim();
}

describe('findRepoRoot', () => {
  test('finds the top of the work tree from the top and from a folder inside, as git does', async () => {
    repo = await makeRepo({ files: { 'src/deep/x.py': 'x = 1\n' } });
    for (const dir of [repo.dir, path.join(repo.dir, 'src', 'deep')]) {
      expect(await findRepoRoot(dir)).toBe(gitTopLevel(dir));
    }
  });

  test('a linked worktree, whose .git is a file naming the repository, is its own top', async () => {
    repo = await makeRepo({ files: { 'a.py': 'a = 1\n' } });
    const worktree = path.join(await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-wt-'))), 'linked');
    cleanups.push(path.dirname(worktree));
    await repo.git('worktree', 'add', '--quiet', worktree);
    expect(await findRepoRoot(worktree)).toBe(worktree);
    expect(await findRepoRoot(worktree)).toBe(gitTopLevel(worktree));
  });

  test('a .git folder that holds no repository is passed over, as git passes it over', async () => {
    repo = await makeRepo({ files: { 'sub/a.py': 'a = 1\n' } });
    await mkdir(path.join(repo.dir, 'sub', '.git'));
    const sub = path.join(repo.dir, 'sub');
    expect(await findRepoRoot(sub)).toBe(repo.dir);
    expect(await findRepoRoot(sub)).toBe(gitTopLevel(sub));
  });

  test('a folder in no repository is refused by name', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'fluksio-plain-'));
    cleanups.push(dir);
    const error = await findRepoRoot(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotAGitRepositoryError);
    expect((error as Error).message).toContain(`${dir} is not inside a git repository`);
  });
});

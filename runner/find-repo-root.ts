import { lstatSync, readFileSync, statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { gitOutput } from './git-output.js';
import { NotAGitRepositoryError } from './not-a-git-repository-error.js';

/**
 * The top-level directory of the git work tree containing `dir` (real path, as git
 * reports it). Throws NotAGitRepositoryError outside one.
 *
 * Found as git finds it, by walking up to the nearest directory holding a `.git`
 * repository (or a `.git` file naming one, as a worktree or submodule has), without
 * starting git: a process costs a cached `fluksio run` more than the rest of this. Where
 * the walk cannot be sure — no `.git` up to the root, or a mount point crossed, which
 * git's discovery stops at — git is asked.
 */
export async function findRepoRoot(dir: string): Promise<string> {
  const real = await realpath(dir);
  return nearestWorkTree(real) ?? (await askGit(real, dir));
}

/** The nearest directory from `dir` up whose `.git` is a repository or a gitfile; null when unsure. */
function nearestWorkTree(dir: string): string | null {
  const device = statSync(dir).dev;
  for (let current = dir; ; current = path.dirname(current)) {
    if (statSync(current).dev !== device) return null;
    const dotGit = path.join(current, '.git');
    const stats = lstatSync(dotGit, { throwIfNoEntry: false });
    // A `.git` directory without HEAD is no repository: git looks further up, as this does.
    if (stats?.isDirectory() && lstatSync(path.join(dotGit, 'HEAD'), { throwIfNoEntry: false })?.isFile()) {
      return current;
    }
    if (stats?.isFile() && readFileSync(dotGit, 'latin1').startsWith('gitdir: ')) return current;
    if (path.dirname(current) === current) return null;
  }
}

/** git's answer, in `real`; errors name `dir`, as the caller gave it. */
async function askGit(real: string, dir: string): Promise<string> {
  let top: string;
  try {
    top = await gitOutput(real, ['rev-parse', '--show-toplevel']);
  } catch (error) {
    // git ran and said no (an exit status); git missing or unable to start is another problem.
    if (typeof ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code === 'number') {
      throw new NotAGitRepositoryError(dir, { cause: error });
    }
    throw error;
  }
  return await realpath(top.trim());
}

import { realpath } from 'node:fs/promises';
import { GitError, simpleGit } from 'simple-git';
import { NotAGitRepositoryError } from './not-a-git-repository-error.js';

/**
 * The top-level directory of the git work tree containing `dir` (real path, as git
 * reports it). Throws NotAGitRepositoryError outside one.
 */
export async function findRepoRoot(dir: string): Promise<string> {
  try {
    const top = await simpleGit({ baseDir: dir }).revparse(['--show-toplevel']);
    return await realpath(top.trim());
  } catch (error) {
    if (error instanceof GitError) throw new NotAGitRepositoryError(dir);
    throw error;
  }
}

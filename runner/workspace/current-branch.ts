import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { gitOutput } from './git-output.js';

/** What a HEAD that only points git at the reftable holds; git itself must be asked then. */
const REFTABLE_HEAD = 'refs/heads/.invalid';

/**
 * The branch checked out in the work tree at `repoRoot` (`main`, `feature/lr`), or null
 * when HEAD is detached (a CI checkout of a commit, a bisect). Read from the work tree's
 * own HEAD file (a linked worktree or submodule has its own, named by its `.git` file)
 * without starting git, as findRepoRoot does: a process costs a cached `fluksio run` more
 * than the rest of it. Only a reftable repository, whose HEAD file names no branch, asks git.
 */
export async function currentBranch(repoRoot: string): Promise<string | null> {
  const dotGit = path.join(repoRoot, '.git');
  const gitDir = (await stat(dotGit)).isDirectory()
    ? dotGit
    : path.resolve(repoRoot, /^gitdir: (.+)$/m.exec(await readFile(dotGit, 'utf8'))?.[1]?.trim() ?? '.git');
  const head = (await readFile(path.join(gitDir, 'HEAD'), 'utf8')).trim();
  const ref = /^ref: (refs\/heads\/.+)$/.exec(head)?.[1];
  if (ref === undefined) return null;
  if (ref !== REFTABLE_HEAD) return ref.slice('refs/heads/'.length);
  const name = await gitOutput(repoRoot, ['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '');
  return name.trim() || null;
}

import { simpleGit } from 'simple-git';
import { originRepository } from '../../client/origin-repository.js';

/**
 * The git repository around `cwd` and the control plane's name of it, from its `origin`
 * (as submit names it); null outside a repository or in one without an origin.
 */
export async function originRepositoryHere(
  cwd: string,
): Promise<{ repository: string; repoRoot: string } | null> {
  const git = simpleGit({ baseDir: cwd });
  const root = await git.revparse(['--show-toplevel']).catch(() => null);
  if (root === null) return null;
  const url = (await git.remote(['get-url', 'origin']).catch(() => '')) || '';
  if (!url.trim()) return null;
  return { repository: originRepository(url.trim(), root.trim()).repository, repoRoot: root.trim() };
}

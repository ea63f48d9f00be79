/** Which commits a mirror's fetched refs reach: what a runner may run (git-workspace.ts). */

/** Where a mirror keeps the repository's branches, to tell which commits they reach. */
export const BRANCHES = 'refs/fluksio/heads/';
/** Where pull requests' refs are fetched to, for the same question. */
export const PULLS = 'refs/fluksio/pull/';

/** Whether a ref under one of `refs` (a prefix or a full ref name) has `commit` in its history. */
export async function isReachable(
  git: (args: string[]) => Promise<string>,
  commit: string,
  refs: string[],
): Promise<boolean> {
  const found = await git([
    'for-each-ref',
    '--count=1',
    '--format=%(refname)',
    `--contains=${commit}`,
    ...refs,
  ]).catch(() => '');
  return found.trim() !== '';
}

/**
 * Whether `commit` is the tip of a pull request's merge ref (`refs/pull/<n>/merge`, which
 * only GitHub writes) and each of its parents is a branch's.
 */
export async function isBranchesMerge(
  git: (args: string[]) => Promise<string>,
  commit: string,
): Promise<boolean> {
  const tips = await git(['for-each-ref', '--format=%(objectname) %(refname)', PULLS]);
  const isMergeTip = tips
    .split('\n')
    .some((line) => line.startsWith(`${commit} `) && line.endsWith('/merge'));
  if (!isMergeTip) return false;
  const parents = (await git(['rev-list', '--parents', '--max-count=1', commit])).trim().split(' ').slice(1);
  if (parents.length === 0) return false;
  for (const parent of parents) {
    if (!(await isReachable(git, parent, [BRANCHES]))) return false;
  }
  return true;
}

/** Which commits a mirror's fetched refs reach: what a runner may run (git-workspace.ts). */

/** Where a mirror keeps the repository's branches, to tell which commits they reach. */
export const BRANCHES = 'refs/fluksio/heads/';
/** Where a mirror keeps the repository's tags: like branches, only writers push them. */
export const TAGS = 'refs/fluksio/tags/';
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
 * Whether `commit` is GitHub's merge of branch commits: each of its parents is a branch's and
 * it is either the tip of a pull request's merge ref (`refs/pull/<n>/merge`, which only GitHub
 * writes) or a merge of two parents whose tree is exactly what merging them cleanly gives. The
 * second is a merge GitHub made earlier and has since remade (the base or the head moved on
 * after a `pull_request` workflow submitted it): its content is then wholly the branches'.
 */
export async function isBranchesMerge(
  git: (args: string[]) => Promise<string>,
  commit: string,
): Promise<boolean> {
  const parents = (await git(['rev-list', '--parents', '--max-count=1', commit])).trim().split(' ').slice(1);
  if (parents.length === 0) return false;
  for (const parent of parents) {
    if (!(await isReachable(git, parent, [BRANCHES]))) return false;
  }
  const tips = await git(['for-each-ref', '--format=%(objectname) %(refname)', PULLS]);
  const isMergeTip = tips
    .split('\n')
    .some((line) => line.startsWith(`${commit} `) && line.endsWith('/merge'));
  return isMergeTip || (parents.length === 2 && (await isCleanMergeOf(git, commit, parents)));
}

/** Whether `commit`'s tree is the clean merge of `parents` (a conflict, or any failure: no). */
async function isCleanMergeOf(
  git: (args: string[]) => Promise<string>,
  commit: string,
  parents: string[],
): Promise<boolean> {
  const merged = await git(['merge-tree', '--write-tree', '--no-messages', ...parents]).catch(() => '');
  const tree = (await git(['rev-parse', '--verify', `${commit}^{tree}`]).catch(() => '')).trim();
  const mergedTree = merged.split('\n')[0]?.trim() ?? '';
  return tree !== '' && mergedTree === tree;
}

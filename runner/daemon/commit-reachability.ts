/** Which commits a mirror's fetched refs reach: what a runner may run (git-workspace.ts). */
import type { GitCommandOptions } from './git-command.js';

/** What checkReachable reads of a checkout request (git-workspace.ts's CheckoutRequest). */
export interface ReachabilityRequest {
  slot: number;
  repository: string;
  fetchRef: string | null;
  commit: string;
  fork?: boolean;
}

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

/**
 * Only a commit a branch, a tag or a pull request's ref reaches runs (DESIGN §5): a server
 * hands out a dangling commit by its id, but nobody pushed it anywhere to be run. A
 * fork's run (its `refs/pull/<n>/head`, approved on its pull request) may be reached by
 * pull requests' refs alone. A trusted run's commit must be a branch's or a tag's (both
 * pushed only by writers; a release tag may outlive its branch), or at its fetch ref,
 * which only the control plane sets, for a same-repository pull request: anyone can open a
 * pull request, so `refs/pull/*` reaches commits nobody with write access pushed, which
 * must not run with the runner's secrets and into the trusted cache merely because a
 * submitter named them. GitHub's merge of a pull request (`refs/pull/<n>/merge`, the
 * commit a `pull_request` workflow runs and may submit) counts when each of its parents
 * is a branch's: it is then the merge of two trusted commits. A tip is recognised from
 * `ls-remote` alone; for an older commit the refs are fetched and git says whether one of
 * them has it in its history.
 */
export async function checkReachable(
  git: (args: string[], extra?: Partial<GitCommandOptions>) => Promise<string>,
  url: string,
  request: ReachabilityRequest,
  header: Partial<GitCommandOptions>,
): Promise<void> {
  const { commit, fetchRef } = request;
  const fork = request.fork === true;
  const slotRef = `refs/fluksio/slot-${request.slot}`;
  const wanted = ['refs/heads/*', 'refs/tags/*', 'refs/pull/*', ...(fetchRef ? [fetchRef] : [])];
  const listed = await git(['ls-remote', '--', url, ...wanted], header);
  const lines = listed.split('\n').map((line) => line.split('\t'));
  const tipOf = lines.filter(([sha]) => sha === commit).map(([, ref]) => ref ?? '');
  // An annotated tag's commit is listed on its peeled line, `refs/tags/<name>^{}`.
  const trustedTip = (ref: string) => ref.startsWith('refs/heads/') || ref.startsWith('refs/tags/');
  if (tipOf.some((ref) => fork || ref === fetchRef || trustedTip(ref))) return;
  // Only a ref the server has is asked for: a missing one would fail the whole fetch.
  const ownRef = fetchRef !== null && lines.some(([, ref]) => ref === fetchRef) ? fetchRef : null;
  // Each fetch prunes only the refs its own refspecs write.
  const fetchRefs = (refspecs: string[]) =>
    git(
      ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--prune', '--', url, ...refspecs],
      header,
    );
  const branchesAndOwn = [
    `+refs/heads/*:${BRANCHES}*`,
    `+refs/tags/*:${TAGS}*`,
    ...(ownRef ? [`+${ownRef}:${slotRef}`] : []),
  ];
  if (fork) {
    await fetchRefs([...branchesAndOwn, `+refs/pull/*:${PULLS}*`]);
    if (await isReachable(git, commit, [BRANCHES, TAGS, PULLS, ...(ownRef ? [slotRef] : [])])) return;
    throw new Error(
      `Commit ${commit} is on no branch, tag or pull request of ${request.repository}${fetchRef ? ` and not at ${fetchRef}` : ''}: ` +
        'it was force-pushed away or never pushed; only commits a branch, tag or pull request reaches run',
    );
  }
  // A trusted run's fetch ref is the control plane's: a same-repository pull request's head.
  // Most trusted commits are a branch's (one it moved past since): every pull request's
  // refs (forks' objects among them, thousands in a large repository) are fetched only
  // when the branches do not reach it.
  await fetchRefs(branchesAndOwn);
  if (await isReachable(git, commit, [BRANCHES, TAGS, ...(ownRef ? [slotRef] : [])])) return;
  await fetchRefs([`+refs/pull/*:${PULLS}*`]);
  if (await isBranchesMerge(git, commit)) return;
  const onPull = await isReachable(git, commit, [PULLS]);
  throw new Error(
    onPull
      ? `Commit ${commit} is on no branch or tag of ${request.repository}, only on a pull request's ref, which anyone can open: ` +
          "a trusted run (with the runner's secrets, into the trusted cache) needs a commit a branch or tag reaches; " +
          `a fork's pull request is approved on it instead: /fluksio run --sha ${commit}`
      : `Commit ${commit} is on no branch, tag or pull request of ${request.repository}: ` +
          'it was force-pushed away or never pushed; only commits a branch, tag or pull request reaches run',
  );
}

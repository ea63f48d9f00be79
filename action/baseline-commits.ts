import { simpleGit } from 'simple-git';
import { firstParentCommits } from '../runner/first-parent-commits.js';
import type { WorkflowContext } from './workflow-context.js';

/**
 * Where a run's baseline is looked for in the cached store, nearest first (DESIGN §7).
 * On a pull request: the merge-base of its base and head, then that commit's
 * first-parent ancestors — the base branch's runs; in a checkout too shallow to find
 * the merge-base, the base branch's commit alone. Otherwise: the run's commit and its
 * first-parent ancestors.
 */
export async function baselineCommits(
  repoRoot: string,
  workflow: WorkflowContext,
  commit: string | null,
): Promise<string[]> {
  const pr = workflow.pullRequest;
  if (!pr) return commit ? firstParentCommits(repoRoot, commit) : [];
  const mergeBase = await simpleGit({ baseDir: repoRoot })
    .raw(['merge-base', pr.baseSha, pr.headSha])
    .then((out) => out.trim())
    .catch(() => '');
  if (!mergeBase) return [pr.baseSha];
  const ancestry = await firstParentCommits(repoRoot, mergeBase);
  return ancestry.length > 0 ? ancestry : [mergeBase];
}

/** The sentence a summary says when no baseline was found. */
export function noBaselineNote(workflow: WorkflowContext): string {
  const where = workflow.pullRequest
    ? `on ${workflow.pullRequest.baseRef} at or before this pull request's merge-base`
    : 'at this commit or its first-parent ancestors';
  return `the cached store (.fluksio/) has no successful run of this pipeline ${where}; carry it between jobs with actions/cache to compare against the base branch.`;
}

/** Which commit ran, in words, when the workflow runs for a pull request. */
export function commitNote(workflow: WorkflowContext, commit: string | null): string | null {
  const pr = workflow.pullRequest;
  if (!pr || !commit) return null;
  if (commit === pr.headSha) return `the head of #${pr.number}`;
  return `GitHub's merge of #${pr.number} (head ${pr.headSha.slice(0, 10)}) into ${pr.baseRef} (${pr.baseSha.slice(0, 10)})`;
}

/**
 * How a summary names the run it compared with, as the app's check run does: on a pull
 * request `main @ 1a2b3c4`, else the commit, `(this commit)` when it is the run's own.
 */
export function baselineLabel(
  workflow: WorkflowContext,
  baselineCommit: string | null,
  runCommit: string | null,
): string {
  if (baselineCommit === null) return 'a run with no commit';
  const at = baselineCommit.slice(0, 7);
  const pr = workflow.pullRequest;
  if (pr) return `${pr.baseRef} @ ${at}`;
  return `${at}${baselineCommit === runCommit ? ' (this commit)' : ''}`;
}

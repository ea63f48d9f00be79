import type { Logger } from 'pino';
import { isFinalRunStatus } from '../../../schemas/statuses.js';
import type { Run } from '../../../schemas/tables/runs.js';
import type { Database } from '../../../store/db/database.js';
import { countBaselineLookupFailure } from '../../../store/runs/count-baseline-lookup-failure.js';
import { findBaseline } from '../../../store/runs/find-baseline.js';
import { fixRunBaseline } from '../../../store/runs/fix-run-baseline.js';
import { getBaselineRun } from '../../../store/runs/get-baseline-run.js';
import { recordBaselineCommits } from '../../../store/runs/record-baseline-commits.js';
import { permanentGitHubRefusal } from '../permanent-github-refusal.js';
import { repositoryParams, type OutboxOctokit } from './outbox-octokit.js';
import { OutboxRateLimitError, rateLimitRetryAt } from './outbox-rate-limit-error.js';

/** How far back the first-parent walk looks: one page of `GET /commits`. */
const ANCESTORS = 100;
/**
 * Failed lookups of a finished run's commits before its baseline is fixed from its own
 * commit: with the outbox's backoff (doubling from a second, at most five minutes between
 * tries), about twenty minutes of GitHub failing.
 */
export const BASELINE_LOOKUP_ATTEMPTS = 12;

/** Where a run's baseline may be: commits nearest first, and the merge-base for a pull request. */
export interface BaselineCommits {
  commits: readonly string[];
  mergeBase: string | null;
}

/**
 * The run a run's metrics are compared against (DESIGN §7) and how the check run names
 * it (`main @ 1a2b3c4 (merge-base)`). Where it may be is asked of GitHub once per run and
 * recorded on it (recordBaselineCommits): for a pull request's run the merge-base of its
 * base branch and head (compare API), for a push the run's own commit, then their
 * first-parent ancestors (one page of the commits API). A base branch or commit GitHub
 * does not know gives no baseline rather than a check run that never goes out.
 *
 * A finished run's baseline is fixed here once its commits are recorded (fixRunBaseline),
 * and from then on it is that run, never a new lookup. Until then (the run unfinished)
 * the database is searched at every render, so a baseline that succeeds later still
 * shows. A failed lookup of a finished run is counted; after BASELINE_LOOKUP_ATTEMPTS of
 * them, or at once when GitHub refuses for good, its baseline is fixed from its own commit
 * and a warning says so, so no run stays unfixed for ever.
 */
export async function outboxBaseline({
  db,
  octokit,
  run,
  logger,
}: {
  db: Database;
  octokit: OutboxOctokit;
  run: Run;
  logger: Logger;
}): Promise<{ run: Run; label: string } | null> {
  if (run.commit === null) return null;
  let current = run;
  if (!current.baselineFixed && current.baselineCommits === null) {
    let found: BaselineCommits;
    try {
      found = await baselineCommits(octokit, run, run.commit, logger);
    } catch (error) {
      await lookupFailed({ db, run, error, logger });
      throw error;
    }
    current = (await recordBaselineCommits({ db, runId: run.id, ...found })) ?? current;
  }
  // A run that finished (here, by its runner or by the sweeper) is fixed once its commits are known.
  if (!current.baselineFixed && isFinalRunStatus(current.status))
    current = (await fixRunBaseline({ db, run: current })) ?? current;
  const baseline = current.baselineFixed
    ? await getBaselineRun({ db, run: current })
    : await findBaseline({
        db,
        repository: current.repository,
        pipelinePath: current.pipelinePath,
        commits: current.baselineCommits ?? [],
        excludeRunId: current.id,
        // A sweep's members are never each other's baseline: they share the sweep's.
        excludeGroupId: current.groupId,
        paramsDigest: current.paramsDigest,
      });
  if (!baseline?.commit) return null;
  const at = baseline.commit.slice(0, 7);
  const label =
    current.baseRef === null
      ? `${at}${baseline.commit === current.commit ? ' (this commit)' : ''}`
      : `${current.baseRef} @ ${at}${baseline.commit === current.baselineMergeBase ? ' (merge-base)' : ''}`;
  return { run: baseline, label };
}

/**
 * Counts a failed lookup of a finished run's commits (a rate limit is a wait, not a
 * failure) and fixes its baseline from its own commit when asking again is useless.
 */
async function lookupFailed({
  db,
  run,
  error,
  logger,
}: {
  db: Database;
  run: Run;
  error: unknown;
  logger: Logger;
}): Promise<void> {
  if (error instanceof OutboxRateLimitError || rateLimitRetryAt(error, Date.now()) !== null) return;
  const counted = await countBaselineLookupFailure({ db, runId: run.id });
  if (!counted) return;
  const refused = permanentGitHubRefusal(error) !== null;
  if (!refused && counted.baselineLookupFailures < BASELINE_LOOKUP_ATTEMPTS) return;
  const fixed = await fixRunBaseline({ db, run: counted, ownCommit: true });
  logger.warn(
    {
      runId: run.id,
      failures: counted.baselineLookupFailures,
      baselineRunId: fixed?.baselineRunId,
      err: error,
    },
    refused
      ? "GitHub refuses to say where this run's baseline may be; it is fixed from the run's own commit"
      : `GitHub did not say where this run's baseline may be in ${counted.baselineLookupFailures} tries; it is fixed from the run's own commit`,
  );
}

async function baselineCommits(
  octokit: OutboxOctokit,
  run: Run,
  commit: string,
  logger: Logger,
): Promise<BaselineCommits> {
  const { owner, repo } = repositoryParams(run.repository);
  try {
    let start = commit;
    let mergeBase: string | null = null;
    if (run.baseRef !== null) {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/compare/{basehead}', {
        owner,
        repo,
        basehead: `${run.baseRef}...${commit}`,
        per_page: 1,
      });
      start = mergeBase = data.merge_base_commit.sha;
    }
    const { data } = await octokit.request('GET /repos/{owner}/{repo}/commits', {
      owner,
      repo,
      sha: start,
      per_page: ANCESTORS,
    });
    return { commits: firstParentWalk(start, data), mergeBase };
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    if (status !== 404 && status !== 422) throw error;
    logger.warn(
      { runId: run.id, err: error },
      'GitHub does not know the base of this run; it has no baseline',
    );
    return { commits: [], mergeBase: null };
  }
}

/** `start` and its first-parent ancestors among `listed`, nearest first. */
function firstParentWalk(
  start: string,
  listed: readonly { sha: string; parents: { sha: string }[] }[],
): string[] {
  const firstParent = new Map(listed.map((commit) => [commit.sha, commit.parents[0]?.sha]));
  const walk = [start];
  for (
    let sha = firstParent.get(start);
    sha !== undefined && walk.length < ANCESTORS;
    sha = firstParent.get(sha)
  )
    walk.push(sha);
  return walk;
}

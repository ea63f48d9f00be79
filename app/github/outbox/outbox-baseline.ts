import type { Logger } from 'pino';
import type { Run } from '../../../schemas/tables/runs.js';
import type { Database } from '../../../store/db/database.js';
import { findBaseline } from '../../../store/runs/find-baseline.js';
import { repositoryParams, type OutboxOctokit } from './outbox-octokit.js';

/** How far back the first-parent walk looks: one page of `GET /commits`. */
const ANCESTORS = 100;
/** Runs whose commit lists are kept; the oldest is dropped past this. */
const CACHED_RUNS = 1_000;

/** Where a run's baseline may be: commits nearest first, and the merge-base for a pull request. */
export interface BaselineCommits {
  commits: readonly string[];
  mergeBase: string | null;
}

/**
 * The run a run's metrics are compared against (DESIGN §7) and how the check run names
 * it (`main @ 1a2b3c4 (merge-base)`): for a pull request's run the merge-base of its base
 * branch and head (compare API), for a push the run's own commit, then their first-parent
 * ancestors (one page of the commits API). The commits are fetched once per run and kept
 * in `cache`; the baseline is looked up in the database at every render, so a baseline
 * that succeeds later still shows. A base branch or commit GitHub does not know gives no
 * baseline rather than a check run that never goes out.
 */
export async function outboxBaseline({
  db,
  octokit,
  run,
  cache,
  logger,
}: {
  db: Database;
  octokit: OutboxOctokit;
  run: Run;
  cache: Map<string, BaselineCommits>;
  logger: Logger;
}): Promise<{ run: Run; label: string } | null> {
  if (run.commit === null) return null;
  let where = cache.get(run.id);
  if (!where) {
    where = await baselineCommits(octokit, run, run.commit, logger);
    cache.set(run.id, where);
    for (const old of cache.keys()) {
      if (cache.size <= CACHED_RUNS) break;
      cache.delete(old);
    }
  }
  const baseline = await findBaseline({
    db,
    repository: run.repository,
    pipelinePath: run.pipelinePath,
    commits: where.commits,
    excludeRunId: run.id,
    // A sweep's members are never each other's baseline: they share the sweep's.
    excludeGroupId: run.groupId,
    paramsDigest: run.paramsDigest,
  });
  if (!baseline?.commit) return null;
  const at = baseline.commit.slice(0, 7);
  const label =
    run.baseRef === null
      ? `${at}${baseline.commit === run.commit ? ' (this commit)' : ''}`
      : `${run.baseRef} @ ${at}${baseline.commit === where.mergeBase ? ' (merge-base)' : ''}`;
  return { run: baseline, label };
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
      'GitHub does not know the base of this run; its check run has no baseline',
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

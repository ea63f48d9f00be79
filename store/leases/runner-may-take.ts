import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { runs } from '../../schemas/tables/runs.js';

/** A runner's registration, as columns or values of a query. */
export interface RunnerScope {
  labels: SQLWrapper;
  owner: SQLWrapper;
  repositories: SQLWrapper;
}

/** What of a run decides which runners may take it, as columns or values of a query. */
export interface RunScope {
  labels: SQLWrapper;
  repository: SQLWrapper;
  fork: SQLWrapper;
}

/** The current `runs` row's columns. */
export const RUN_COLUMNS: RunScope = { labels: runs.labels, repository: runs.repository, fork: runs.fork };

/**
 * Whether a runner may take a run — by default the current `runs` row's (DESIGN §6): the
 * run's labels are all among the runner's, the repository is its owner's (and one of its
 * repositories, when it lists any), and a fork's run only when the runner accepts forks.
 * GitHub names are case-insensitive, so they are compared in lower case. One expression
 * for the claim and for the reason a queued run gives, so the two can never disagree.
 */
export function runnerMayTake(
  runner: RunnerScope,
  acceptsForks: SQLWrapper | boolean,
  run: RunScope = RUN_COLUMNS,
): SQL {
  return sql`(${run.labels} <@ ${runner.labels}
    and lower(split_part(${run.repository}, '/', 1)) = lower(${runner.owner})
    and (cardinality(${runner.repositories}) = 0
      or exists (select from unnest(${runner.repositories}) as r where lower(r) = lower(${run.repository})))
    and (not ${run.fork} or ${acceptsForks}))`;
}

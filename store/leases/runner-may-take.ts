import { sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { runs } from '../../schemas/tables/runs.js';

/** A runner's registration, as columns or values of a query. */
export interface RunnerScope {
  labels: SQLWrapper;
  owner: SQLWrapper;
  repositories: SQLWrapper;
}

/**
 * Whether a runner may take the run of the current `runs` row (DESIGN §6): the run's labels
 * are all among the runner's, the repository is its owner's (and one of its repositories,
 * when it lists any), and a fork's run only when the runner accepts forks. GitHub names
 * are case-insensitive, so they are compared in lower case. One expression for the claim
 * and for the reason a queued run gives, so the two can never disagree.
 */
export function runnerMayTake(runner: RunnerScope, acceptsForks: SQLWrapper | boolean): SQL {
  return sql`(${runs.labels} <@ ${runner.labels}
    and lower(split_part(${runs.repository}, '/', 1)) = lower(${runner.owner})
    and (cardinality(${runner.repositories}) = 0
      or exists (select from unnest(${runner.repositories}) as r where lower(r) = lower(${runs.repository})))
    and (not ${runs.fork} or ${acceptsForks}))`;
}

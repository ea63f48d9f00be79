import { sql, type Placeholder, type SQL, type SQLWrapper } from 'drizzle-orm';
import { runners } from '../../schemas/tables/runners.js';
import { runs } from '../../schemas/tables/runs.js';
import { milliseconds } from '../db/milliseconds.js';
import { RUN_COLUMNS, runnerMayTake, type RunScope } from './runner-may-take.js';

/** The status reason of a queued run some online runner may take. */
export const QUEUED_REASON = 'Queued';

/**
 * The reason a queued run gives (DESIGN §6), as an SQL expression: `Waiting for a runner
 * labelled gpu, a100` when no runner seen within `onlineWindowMs` may take it (labels,
 * owner and repositories, forks: the claim's own rule), else `Queued`. A `current` reason
 * someone else wrote (`… queued again`) is kept while the run can be taken. By default of
 * the current `runs` row; a run being inserted passes its values and a null reason.
 */
export function waitingReason(
  onlineWindowMs: number | Placeholder,
  run: RunScope = RUN_COLUMNS,
  current: SQLWrapper = runs.statusReason,
): SQL<string> {
  const someoneMayTake = sql`exists (select from ${runners}
    where ${runners.lastSeenAt} > now() - ${milliseconds(onlineWindowMs)}
      and ${runnerMayTake(runners, runners.acceptsForks, run)})`;
  const ownReason = sql`${current} is null or ${current} = ${QUEUED_REASON}
    or ${current} like 'Waiting for a runner%'`;
  const wanted = sql`case when cardinality(${run.labels}) = 0
      then 'for ' || ${run.repository}
      else 'labelled ' || array_to_string(${run.labels}, ', ') end
    || case when ${run.fork} then ' that accepts forks' else '' end`;
  return sql<string>`(case
    when not ${someoneMayTake} then 'Waiting for a runner ' || ${wanted}
    when ${ownReason} then ${QUEUED_REASON}
    else ${current} end)`;
}

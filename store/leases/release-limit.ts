import { sql, type SQL } from 'drizzle-orm';
import { runs } from '../../schemas/tables/runs.js';

/**
 * How many times one run may go back to the queue without using a retry (released by its
 * runner on SIGTERM, or taken and never started) before it is `abandoned` instead. A
 * release is no failure, so it spends none of `retries:`; but a runner restarting in a
 * loop (a crash at checkout, a service manager's restarts) would otherwise hand the same
 * run round forever. Ten leaves room for a fleet redeployed several times under a long run.
 */
export const RELEASE_LIMIT = 10;

/** Whether a run may still be given back to the queue, evaluated in the statement that does it. */
export const mayBeReleasedAgain: SQL = sql`${runs.releases} < ${RELEASE_LIMIT}`;

/** The status reason of a run given back once too often: `reason`, then why it stops here. */
export function releaseLimitReason(reason: string | SQL): SQL {
  return sql`${reason} || ${`; it went back to the queue ${RELEASE_LIMIT} times already without finishing (a runner restarting in a loop?), so it is abandoned`}`;
}

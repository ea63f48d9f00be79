import { sql } from 'drizzle-orm';
import type { RunScope } from './runner-may-take.js';

/** A run not yet stored, as the values `waitingReason` and `runnerMayTake` compare. */
export function runScopeOf(run: { labels: readonly string[]; repository: string; fork: boolean }): RunScope {
  const labels =
    run.labels.length === 0
      ? sql`'{}'::text[]`
      : sql`array[${sql.join(
          run.labels.map((label) => sql`${label}`),
          sql`, `,
        )}]::text[]`;
  return { labels, repository: sql`${run.repository}::text`, fork: sql`${run.fork}::boolean` };
}

import { and, eq, gte, inArray, sql } from 'drizzle-orm';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * Check runs whose run changed state without their render version going up — the change
 * committed, then the process died or the database dropped before the bump — so the
 * outbox, seeing nothing unsent, would leave GitHub showing the old state for ever. A
 * check run is drifted when the status GitHub last accepted is not the one its run's
 * state maps to (queued, in progress, completed) and that state is older than
 * `graceMs`, which leaves the normal bump, right after the change, its time. Their render
 * versions go up; the run ids are returned, at most `limit`.
 */
export async function bumpDriftedChecks({
  db,
  graceMs,
  limit,
}: {
  db: Database;
  graceMs: number;
  limit: number;
}): Promise<string[]> {
  const shown = sql`case ${runs.status} when 'queued' then 'queued' when 'running' then 'in_progress' else 'completed' end`;
  const since = sql`coalesce(${runs.finishedAt}, ${runs.startedAt}, ${runs.queuedAt})`;
  const drifted = db
    .select({ runId: githubChecks.runId })
    .from(githubChecks)
    .innerJoin(runs, eq(runs.id, githubChecks.runId))
    .where(
      and(
        gte(githubChecks.sentVersion, githubChecks.renderVersion),
        sql`${githubChecks.checkRunId} is not null`,
        sql`${githubChecks.sentStatus} is distinct from ${shown}`,
        sql`${since} < now() - make_interval(secs => ${graceMs / 1000})`,
      ),
    )
    .limit(limit);
  const bumped = await db
    .update(githubChecks)
    .set({ renderVersion: sql`${githubChecks.renderVersion} + 1` })
    .where(inArray(githubChecks.runId, drifted))
    .returning({ runId: githubChecks.runId });
  return bumped.map(({ runId }) => runId);
}

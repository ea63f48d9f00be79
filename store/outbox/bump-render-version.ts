import { eq, sql } from 'drizzle-orm';
import type { RunStatus } from '../../schemas/statuses.js';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { outboxTable, type OutboxTarget } from './outbox-target.js';

/** A target after its render version went up. */
export interface BumpedTarget {
  renderVersion: number;
  /** The run's state, for a run's check run (null for other targets). */
  runStatus: RunStatus | null;
  /** The run's sweep, for a run's check run (null for other targets and single runs). */
  groupId: string | null;
}

/**
 * Says that what a target shows on GitHub changed (DESIGN §8): one UPDATE adds one to its
 * render version, so the outbox sends again whatever it sent before; for a run's check run
 * it also reads the run's state and sweep. Null when the target has no row (a run that has
 * no check run, such as a local or submitted run).
 */
export async function bumpRenderVersion({
  db,
  target,
}: {
  db: Database;
  target: OutboxTarget;
}): Promise<BumpedTarget | null> {
  const { table, key, renderVersion } = outboxTable(target.kind);
  const ofRun = <T>(column: typeof runs.status | typeof runs.groupId) =>
    target.kind === 'check'
      ? sql<T>`(select ${column} from ${runs} where ${runs.id} = ${githubChecks.runId})`
      : sql<null>`null`;
  const [bumped] = await db
    .update(table)
    .set({ renderVersion: sql`${renderVersion} + 1` })
    .where(eq(key, target.id))
    .returning({
      renderVersion,
      runStatus: ofRun<RunStatus>(runs.status),
      groupId: ofRun<string | null>(runs.groupId),
    });
  return bumped ?? null;
}

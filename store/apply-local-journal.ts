import { eq, max } from 'drizzle-orm';
import type { LocalJournalRecord } from '../schemas/local-journal-record.js';
import { isFinalRunStatus } from '../schemas/statuses.js';
import { appliedEvents } from '../schemas/tables/applied-events.js';
import { runs } from '../schemas/tables/runs.js';
import { applyRunEvents } from './apply-run-events.js';
import type { Database } from './database.js';
import { finishRun } from './finish-run.js';
import { runFromJson } from './run-from-json.js';

/**
 * The `applied_events` attempt under which a local journal's lines are counted as applied:
 * no run attempt is 0, so these rows never mix with a control plane's event sequence.
 */
export const JOURNAL_ATTEMPT = 0;

/** How far the database has applied a run's journal. */
export interface JournalProgress {
  /** Lines applied, counted from the first. */
  applied: number;
  /** Whether the run's final line was applied: nothing can follow it. */
  finished: boolean;
}

/** Run id → how much of its local journal is applied, for every run that has some applied. */
export async function localJournalProgress({ db }: { db: Database }): Promise<Map<string, JournalProgress>> {
  const rows = await db
    .select({ runId: runs.id, status: runs.status, last: max(appliedEvents.seq) })
    .from(appliedEvents)
    .innerJoin(runs, eq(runs.id, appliedEvents.runId))
    .where(eq(appliedEvents.attempt, JOURNAL_ATTEMPT))
    .groupBy(runs.id, runs.status);
  return new Map(
    rows.map(({ runId, status, last }) => [
      runId,
      { applied: (last ?? -1) + 1, finished: isFinalRunStatus(status) },
    ]),
  );
}

/**
 * Applies the lines of one run's local journal that the database does not hold yet
 * (`records` is the whole journal, first line first), in one transaction with the count of
 * lines applied, so applying a journal again, or one that grew meanwhile, is exact:
 * nothing twice, nothing lost. `run.created` inserts the run row as it was written;
 * `run.events` goes through applyRunEvents (stages, cache entries, points, annotations);
 * `run.finished` records the end at the time the run ended. Returns the lines applied.
 */
export async function applyLocalJournal({
  db,
  runId,
  records,
  applied,
}: {
  db: Database;
  runId: string;
  records: readonly LocalJournalRecord[];
  /** Lines already applied (localJournalProgress). */
  applied: number;
}): Promise<number> {
  const first = records[0];
  if (first?.type !== 'run.created' || first.run.id !== runId) {
    throw new Error(`The journal of run ${runId} does not start with that run's run.created line`);
  }
  const run = runFromJson(first.run);
  const pending = records.slice(applied);
  if (pending.length === 0) return 0;
  await db.transaction(async (tx) => {
    for (const [offset, record] of pending.entries()) {
      switch (record.type) {
        case 'run.created':
          await tx.insert(runs).values(run).onConflictDoNothing({ target: runs.id });
          break;
        case 'run.events':
          await applyRunEvents({
            db: tx,
            runId,
            repository: run.repository,
            trustDomain: run.trustDomain,
            events: record.events,
          });
          break;
        case 'run.finished':
          await finishRun({
            db: tx,
            runId,
            status: record.status,
            reason: record.reason,
            metrics: record.metrics,
            dirtyReasons: record.dirtyReasons,
            finishedAt: new Date(record.finishedAt),
            ...(record.baselineRunId === undefined ? {} : { baselineRunId: record.baselineRunId }),
          });
          break;
      }
      await tx
        .insert(appliedEvents)
        .values({ runId, attempt: JOURNAL_ATTEMPT, seq: applied + offset })
        .onConflictDoNothing();
    }
  });
  return pending.length;
}

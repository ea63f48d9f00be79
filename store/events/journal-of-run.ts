import { asc, eq } from 'drizzle-orm';
import type { LocalJournalRecord } from '../../schemas/local-journal-record.js';
import type { RunEvent } from '../../schemas/run-event.js';
import { isFinalRunStatus } from '../../schemas/statuses.js';
import { annotations } from '../../schemas/tables/annotations.js';
import { appliedEvents } from '../../schemas/tables/applied-events.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import { runs } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';
import { JOURNAL_ATTEMPT } from './apply-local-journal.js';
import { toStageRecord } from '../runs/to-stage-record.js';

/**
 * The run journal of a run the database holds but no journal does (a store recorded before
 * fluksio kept journals): its row, its stages' records with their points and annotations,
 * and its end. The journal's lines are counted as applied here, so applying the journal to
 * this database changes nothing, while applying it to a new one rebuilds the run.
 */
export async function journalOfRun({
  db,
  runId,
}: {
  db: Database;
  runId: string;
}): Promise<LocalJournalRecord[]> {
  return db.transaction(async (tx) => {
    const [run] = await tx.select().from(runs).where(eq(runs.id, runId));
    if (!run) throw new Error(`No run ${runId} in the database`);
    const [stageRows, pointRows, annotationRows] = await Promise.all([
      tx.select().from(stages).where(eq(stages.runId, runId)).orderBy(asc(stages.position)),
      tx
        .select({
          stage: metricPoints.stage,
          name: metricPoints.name,
          step: metricPoints.step,
          value: metricPoints.value,
          at: metricPoints.at,
        })
        .from(metricPoints)
        .where(eq(metricPoints.runId, runId)),
      tx.select().from(annotations).where(eq(annotations.runId, runId)).orderBy(asc(annotations.id)),
    ]);
    const events: RunEvent[] = [];
    const next = () => events.length;
    const points = pointRows.map(({ at, ...point }) => (at === null ? point : { ...point, at }));
    if (points.length > 0) events.push({ type: 'metric.points', points, seq: next() });
    for (const { stage, path, line, level, message, title } of annotationRows) {
      events.push({
        type: 'annotation',
        annotation: { stage, path, line, level, message, title },
        seq: next(),
      });
    }
    for (const row of stageRows)
      events.push({ type: 'stage.finished', stage: toStageRecord(row), seq: next() });
    const records: LocalJournalRecord[] = [
      { type: 'run.created', run: JSON.parse(JSON.stringify(run)) as Record<string, unknown> },
    ];
    if (events.length > 0) records.push({ type: 'run.events', events });
    if (isFinalRunStatus(run.status)) {
      records.push({
        type: 'run.finished',
        status: run.status,
        reason: run.statusReason,
        metrics: run.metrics,
        dirtyReasons: run.dirtyReasons,
        finishedAt: (run.finishedAt ?? run.createdAt).toISOString(),
      });
    }
    await tx
      .insert(appliedEvents)
      .values(records.map((_, seq) => ({ runId, attempt: JOURNAL_ATTEMPT, seq })))
      .onConflictDoNothing();
    return records;
  });
}

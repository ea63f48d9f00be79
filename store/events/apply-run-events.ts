import { and, eq, lt, sql, type SQL } from 'drizzle-orm';
import { manifestKeyOf } from '../../core/manifest-key.js';
import type { JobPending } from '../../schemas/job-pending.js';
import type { MetricPoint } from '../../schemas/metric-point.js';
import type { RunEvent, RunEventBody } from '../../schemas/run-event.js';
import { emptyStageRecord, isCacheable, type StageRecord } from '../../schemas/stage-record.js';
import { annotations, type NewAnnotationRow } from '../../schemas/tables/annotations.js';
import { cacheEntries } from '../../schemas/tables/cache-entries.js';
import { logLines, type NewLogLinesRow } from '../../schemas/tables/log-lines.js';
import { metricPoints } from '../../schemas/tables/metric-points.js';
import { runs } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';
import { excluded } from '../db/excluded.js';
import { stageLogSizes } from '../../schemas/tables/stage-log-sizes.js';
import { keepWithinLogLimit } from './keep-within-log-limit.js';

/** Points per INSERT: they travel as one JSON parameter, so this only bounds its size (~0.5 MB). */
const POINTS_PER_INSERT = 10_000;
/** Annotations per INSERT: 7 bind parameters each, far below Postgres's 65,535 per statement. */
const ANNOTATIONS_PER_INSERT = 1000;
/** Log rows per INSERT: 5 bind parameters each. */
const LOG_ROWS_PER_INSERT = 1000;

/** Whose events these are, and the scope their cache entries are written in. */
interface RunEventsTarget {
  db: Database;
  runId: string;
  repository: string;
  trustDomain: string;
}

/**
 * Without `keepLogs`, `stage.log` events are not stored (locally a stage's whole log is a
 * blob). With it, they must carry their seq, and their lines are kept as the log of that
 * attempt (log_lines), as a control plane serves them: with `maxStageLogBytes`, at most
 * that much of each stage's (keepWithinLogLimit).
 */
export type ApplyRunEventsInput = RunEventsTarget &
  (
    | { events: readonly RunEventBody[]; keepLogs?: undefined }
    | { events: readonly RunEvent[]; keepLogs: { attempt: number; maxStageLogBytes?: number } }
  );

/**
 * Applies a batch of a run's events in one transaction, so a batch that fails applies
 * nothing and can be retried whole. `stage.started` records the stage as running;
 * `stage.finished` records its StageRecord and, for a cacheable stage, writes the cache
 * entry of (repository, trustDomain, key) — replacing an older entry of that key, which is
 * how an entry whose blobs went bad is repaired; `stage.pending` says why a running stage's
 * job waits in the queue (or that it no longer does); metric points are upserted in batches;
 * annotations are appended; `stage.log` lines are kept only when asked (`keepLogs`). A
 * `stage.started` tagged `reattached` drops the stage's log lines, annotations and metric
 * points from before it in the attempt: its job's output is read again from the start.
 */
export async function applyRunEvents(input: ApplyRunEventsInput): Promise<void> {
  const { db, runId, repository, trustDomain, events } = input;
  if (events.length === 0) return;
  // Where each stage last re-attached in this batch: a stage whose runner was restarted and
  // resumed the run reads its Slurm job's output again from the start, so it keeps only the
  // lines and annotations reported since, each once. Any other start keeps what came before
  // it: a stage that finished before the restart is not started again (resume-run.ts).
  const starts = new Map<string, number>();
  const logAttempt = input.keepLogs?.attempt;
  if (input.keepLogs) {
    for (const event of input.events) {
      if (event.type === 'stage.started' && event.reattached === true) starts.set(event.stage, event.seq);
    }
  }
  const logs: NewLogLinesRow[] = input.keepLogs
    ? input.events.flatMap((event) =>
        event.type === 'stage.log'
          ? [
              {
                runId,
                attempt: input.keepLogs.attempt,
                stage: event.stage,
                seq: event.seq,
                lines: event.lines,
              },
            ]
          : [],
      )
    : [];
  const keptLogs = logs.filter((row) => row.seq >= (starts.get(row.stage) ?? 0));
  await db.transaction(async (tx) => {
    for (const [stage, seq] of starts) {
      if (logAttempt === undefined) break;
      await tx
        .delete(logLines)
        .where(
          and(
            eq(logLines.runId, runId),
            eq(logLines.stage, stage),
            eq(logLines.attempt, logAttempt),
            lt(logLines.seq, seq),
          ),
        );
      // Its lines of this attempt are all gone: those of this batch are counted anew.
      await tx
        .delete(stageLogSizes)
        .where(
          and(
            eq(stageLogSizes.runId, runId),
            eq(stageLogSizes.stage, stage),
            eq(stageLogSizes.attempt, logAttempt),
          ),
        );
      // Annotations carry no seq: those stored are from earlier batches, all before this
      // start (an attempt's start deletes the previous attempts' ones, start-leased-run.ts).
      await tx.delete(annotations).where(and(eq(annotations.runId, runId), eq(annotations.stage, stage)));
      // So do its points: a pass read again reports them again, and one run anew (its job
      // gone) may stop short of the old pass's last step, which would stay in its series.
      await tx.delete(metricPoints).where(and(eq(metricPoints.runId, runId), eq(metricPoints.stage, stage)));
    }
    // A point reported twice in one batch keeps its last value: one INSERT may not update a row twice.
    const points = new Map<string, MetricPoint>();
    const notes: NewAnnotationRow[] = [];
    for (const event of events) {
      switch (event.type) {
        case 'stage.started':
          await recordStageStarted(tx, runId, event.stage, new Date(event.at));
          break;
        case 'stage.finished':
          await recordStageFinished(tx, runId, event.stage);
          if (isCacheable(event.stage)) {
            await writeCacheEntry(tx, runId, repository, trustDomain, event.stage);
          }
          break;
        case 'stage.pending':
          await recordStagePending(tx, runId, event.stage, event.pending);
          break;
        case 'metric.points':
          for (const point of event.points) {
            // Reported before its stage re-attached in this batch: of the pass read again.
            if ('seq' in event && event.seq < (starts.get(point.stage) ?? 0)) continue;
            points.set(JSON.stringify([point.stage, point.name, point.step]), point);
          }
          break;
        case 'annotation':
          // One of this batch reported before its stage re-attached is read again after it.
          if (input.keepLogs && 'seq' in event && event.seq < (starts.get(event.annotation.stage) ?? 0))
            break;
          notes.push({ runId, ...event.annotation });
          break;
        case 'stage.log':
          break;
      }
    }
    for (const chunk of chunks([...points.values()], POINTS_PER_INSERT)) {
      await writeMetricPoints(tx, runId, chunk);
    }
    for (const chunk of chunks(notes, ANNOTATIONS_PER_INSERT)) {
      await tx.insert(annotations).values(chunk);
    }
    const maxStageLogBytes = input.keepLogs?.maxStageLogBytes;
    const storedLogs =
      logAttempt === undefined || maxStageLogBytes === undefined
        ? keptLogs
        : await keepWithinLogLimit(tx, {
            runId,
            attempt: logAttempt,
            rows: keptLogs,
            maxBytes: maxStageLogBytes,
          });
    for (const chunk of chunks(storedLogs, LOG_ROWS_PER_INSERT)) {
      // A seq is applied once (applied_events), so a conflict here is a resent event.
      await tx.insert(logLines).values(chunk).onConflictDoNothing();
    }
  });
}

/** The next position in a run's stage order, for a stage seen for the first time. */
function nextPosition(runId: string): SQL<number> {
  return sql<number>`(select coalesce(max(${stages.position}) + 1, 0) from ${stages} where ${stages.runId} = ${runId})`;
}

/** Marks a stage running; a stage already recorded (an earlier attempt) is reset. */
async function recordStageStarted(db: Database, runId: string, name: string, at: Date): Promise<void> {
  const { name: _name, ...running } = {
    ...emptyStageRecord(name, 'running'),
    status: 'running' as const,
    startedAt: at,
    finishedAt: null,
  };

  await db
    .insert(stages)
    .values({ runId, name, position: nextPosition(runId), ...running })
    .onConflictDoUpdate({ target: [stages.runId, stages.name], set: running });
}

/** Why a running stage's job waits, or null once it runs; a stage not running keeps none. */
async function recordStagePending(
  db: Database,
  runId: string,
  name: string,
  pending: JobPending | null,
): Promise<void> {
  await db
    .update(stages)
    .set({ pending })
    .where(and(eq(stages.runId, runId), eq(stages.name, name), eq(stages.status, 'running')));
}

async function recordStageFinished(db: Database, runId: string, record: StageRecord): Promise<void> {
  const finished = {
    status: record.status,
    cacheKey: record.cacheKey,
    keyInputs: record.keyInputs,
    cachedFrom: record.cachedFrom,
    cachedFromTeam: record.cachedFromTeam,
    reasons: record.reasons,
    notes: record.notes,
    startedAt: record.startedAt === null ? null : new Date(record.startedAt),
    finishedAt: record.finishedAt === null ? null : new Date(record.finishedAt),
    durationMs: record.durationMs,
    exitCode: record.exitCode,
    outs: record.outs,
    metrics: record.metrics,
    logTail: record.logTail,
    logDigest: record.logDigest,
    error: record.error,
    dirtyReasons: record.dirtyReasons,
    warnings: record.warnings,
    usage: record.usage,
    // A finished stage's job waits no more, whatever its record says.
    pending: null,
  };
  await db
    .insert(stages)
    .values({ runId, name: record.name, position: nextPosition(runId), ...finished })
    .onConflictDoUpdate({ target: [stages.runId, stages.name], set: finished });
  if (record.usage) {
    // Added, never set: an event is applied once, and a job of an earlier attempt (requeued
    // half-way) cost what it ran, though this attempt's stage record replaces its record.
    await db
      .update(runs)
      .set({
        cpuSeconds: sql`coalesce(${runs.cpuSeconds}, 0) + ${record.usage.cpuSeconds}`,
        gpuSeconds: sql`coalesce(${runs.gpuSeconds}, 0) + ${record.usage.gpuSeconds}`,
      })
      .where(eq(runs.id, runId));
  }
}

/** The stage cache entry a successful stage's own finish event writes (DESIGN §5). */
async function writeCacheEntry(
  db: Database,
  runId: string,
  repository: string,
  trustDomain: string,
  record: StageRecord,
): Promise<void> {
  // isCacheable has checked these; it is not a type guard.
  if (record.cacheKey === null || record.keyInputs === null) return;
  const entry = {
    stage: record.name,
    runId,
    outs: record.outs,
    metrics: record.metrics,
    keyInputs: record.keyInputs,
    manifestKey: record.keyInputs.readSet ? manifestKeyOf(record.keyInputs) : null,
    createdAt: sql`now()`,
  };
  await db
    .insert(cacheEntries)
    .values({ repository, trustDomain, key: record.cacheKey, ...entry })
    .onConflictDoUpdate({
      target: [cacheEntries.repository, cacheEntries.trustDomain, cacheEntries.key],
      set: entry,
    });
}

/**
 * Upserts a run's points. They go as one JSON parameter unpacked by jsonb_to_recordset:
 * measured 3-4x faster than a VALUES list of five parameters per point, on both PGlite
 * and Postgres. JSON numbers round-trip doubles exactly, and points are finite.
 */
async function writeMetricPoints(db: Database, runId: string, points: readonly MetricPoint[]): Promise<void> {
  const rows = sql`select ${runId}, p.stage, p.name, p.step, p.value, p.at
    from jsonb_to_recordset(${JSON.stringify(points)}::jsonb)
    as p(stage text, name text, step bigint, value double precision, at bigint)`;
  await db
    .insert(metricPoints)
    .select(rows)
    .onConflictDoUpdate({
      target: [metricPoints.runId, metricPoints.stage, metricPoints.name, metricPoints.step],
      set: { value: excluded(metricPoints.value), at: excluded(metricPoints.at) },
    });
}

function* chunks<T>(rows: readonly T[], size: number): Generator<T[]> {
  for (let start = 0; start < rows.length; start += size) yield rows.slice(start, start + size);
}

import { z } from 'zod';
import { Annotation } from './annotation.js';
import { NonNegativeInt32 } from './int32.js';
import { IsoTimestamp } from './iso-timestamp.js';
import { JobPending } from './job-pending.js';
import { MetricPoint } from './metric-point.js';
import { StageRecord } from './stage-record.js';

const StageStarted = z.strictObject({
  type: z.literal('stage.started'),
  stage: z.string(),
  at: IsoTimestamp,
  /**
   * The stage starts again in an attempt its runner resumed after a restart — re-attached
   * to its Slurm job, whose output is read again from its start, or executed anew — so
   * the log lines and annotations the stage reported earlier in the attempt are replaced
   * by those that follow. Absent (older runners, every other start) means false; optional
   * rather than defaulted so that emitters need not say it.
   */
  reattached: z.boolean().optional(),
});
/** Output lines of a stage, already masked. */
const StageLog = z.strictObject({
  type: z.literal('stage.log'),
  stage: z.string(),
  lines: z.array(z.string()),
});
/**
 * Why a running stage's job waits in the scheduler's queue, reported when the reason
 * changes; `pending: null` once the job runs (its end clears it too).
 */
const StagePending = z.strictObject({
  type: z.literal('stage.pending'),
  stage: z.string(),
  pending: JobPending.nullable(),
});
const MetricPoints = z.strictObject({
  type: z.literal('metric.points'),
  points: z.array(MetricPoint).min(1),
});
const AnnotationAdded = z.strictObject({ type: z.literal('annotation'), annotation: Annotation });
const StageFinished = z.strictObject({ type: z.literal('stage.finished'), stage: StageRecord });

/**
 * What the engine reports while a run executes. Locally the store applies these as
 * they come; a runner uploads them to the control plane in batches, each carrying a
 * sequence number so that `(run, attempt, seq)` is applied once (DESIGN §6).
 */
export const RunEventBody = z.discriminatedUnion('type', [
  StageStarted,
  StageLog,
  StagePending,
  MetricPoints,
  AnnotationAdded,
  StageFinished,
]);
export type RunEventBody = z.infer<typeof RunEventBody>;

const seq = { seq: NonNegativeInt32 };

/** A run event with its place in the run's stream. */
export const RunEvent = z.discriminatedUnion('type', [
  StageStarted.extend(seq),
  StageLog.extend(seq),
  StagePending.extend(seq),
  MetricPoints.extend(seq),
  AnnotationAdded.extend(seq),
  StageFinished.extend(seq),
]);
export type RunEvent = z.infer<typeof RunEvent>;

import { z } from 'zod';
import { BlobDigest } from './blob-digest.js';
import { INT32_MAX } from './int32.js';
import { IsoTimestamp } from './iso-timestamp.js';
import { JobPending } from './job-pending.js';
import { KeyInputs } from './key-inputs.js';
import { OutRecord } from './out-record.js';
import { StageStatus } from './statuses.js';
import { StageUsage } from './stage-usage.js';

/**
 * What a stage did in one run, as its finish event reports it. A `ran` stage with a
 * cache key and key inputs is what a cache entry is written from.
 */
export const StageRecord = z.strictObject({
  name: z.string(),
  status: StageStatus,
  /** Null for `cache: false` stages and for stages that never got as far as a key. */
  cacheKey: z.string().nullable(),
  keyInputs: KeyInputs.nullable(),
  /** For a cached stage: the run whose execution produced these outputs. */
  cachedFrom: z.string().nullable(),
  /**
   * For a cached stage: whether its entry came from the team's cache on the control plane
   * (`fluksio run --remote-cache`) rather than this store. Absent from older records.
   */
  cachedFromTeam: z.boolean().default(false),
  /** Why the stage ran instead of being restored; empty for a cached stage. */
  reasons: z.array(z.string()),
  /**
   * What the summary says about how the stage is keyed: the files it read that are not
   * among its deps, or why its reads could not be traced. Absent from older runners' events.
   */
  notes: z.array(z.string()).default([]),
  startedAt: IsoTimestamp.nullable(),
  finishedAt: IsoTimestamp.nullable(),
  durationMs: z.number().nonnegative(),
  exitCode: z
    .number()
    .int()
    .min(-INT32_MAX - 1)
    .max(INT32_MAX)
    .nullable(),
  outs: z.array(OutRecord),
  /**
   * The stage's metric values: the last point of each series it streamed, then the
   * values of its metrics files (flattened to dotted names), which win on a clash.
   */
  metrics: z.record(z.string(), z.number()),
  /** The end of the stage's (masked) output, bounded. */
  logTail: z.string(),
  /** The stage's whole (masked) output, as a blob. */
  logDigest: BlobDigest.nullable(),
  /** A sentence saying why the stage failed, was skipped or cancelled. */
  error: z.string().nullable(),
  /**
   * Key inputs that changed while the stage ran (`helpers.py changed while train ran`):
   * its key no longer says what it read, so its result is not cached and the run is dirty.
   */
  dirtyReasons: z.array(z.string()).default([]),
  /** What the user should know and fix (`train wrote debug.log, which is not among its outs…`). */
  warnings: z.array(z.string()).default([]),
  /** What its Slurm job used (stage-usage.ts); null for a stage that ran no job. Absent from older runners' events. */
  usage: StageUsage.nullable().default(null),
  /**
   * While the stage runs: why its Slurm job waits in the queue (`stage.pending` events);
   * null once the job runs, and in every finish event. Absent from older records.
   */
  pending: JobPending.nullable().default(null),
});
export type StageRecord = z.infer<typeof StageRecord>;

/**
 * Whether a finished stage may become a cache entry: it ran, succeeded, has a key, and
 * none of its key inputs changed while it ran.
 */
export function isCacheable(record: StageRecord): boolean {
  return (
    record.status === 'ran' &&
    record.cacheKey !== null &&
    record.keyInputs !== null &&
    record.dirtyReasons.length === 0
  );
}

/**
 * A stage's record before anything about it is known but its status: no key, no outputs,
 * no times. The engine, the local recorder and the store each fill in what they learn.
 */
export function emptyStageRecord(name: string, status: StageStatus): StageRecord {
  return {
    name,
    status,
    cacheKey: null,
    keyInputs: null,
    cachedFrom: null,
    cachedFromTeam: false,
    reasons: [],
    startedAt: null,
    finishedAt: null,
    durationMs: 0,
    exitCode: null,
    outs: [],
    metrics: {},
    logTail: '',
    logDigest: null,
    error: null,
    dirtyReasons: [],
    warnings: [],
    notes: [],
    usage: null,
    pending: null,
  };
}

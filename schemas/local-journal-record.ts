import { z } from 'zod';
import { RunEvent } from './run-event.js';
import { RunStatus } from './statuses.js';

const RunCreated = z.strictObject({
  type: z.literal('run.created'),
  /**
   * The whole run row as JSON (times as ISO strings), whatever columns the runs table
   * has: a column added to it travels through the journal without a change here.
   */
  run: z.record(z.string(), z.unknown()),
});

/** A batch of the engine's events, as the run's store would apply it (logs are blobs). */
const RunEvents = z.strictObject({
  type: z.literal('run.events'),
  events: z.array(RunEvent).min(1),
});

const RunFinished = z.strictObject({
  type: z.literal('run.finished'),
  status: RunStatus,
  reason: z.string().nullable(),
  metrics: z.record(z.string(), z.number()),
  /** Key inputs that changed while stages ran (absent in journals written before). */
  dirtyReasons: z.array(z.string()).default([]),
  finishedAt: z.iso.datetime(),
  /**
   * The run it was compared with when it ended, fixed from then on; null for none. Absent
   * in journals written before baselines were fixed (then looked up when shown).
   */
  baselineRunId: z.string().nullable().optional(),
});

/**
 * One line of a local run's journal (`.fluksio/journal/<run>.jsonl`): what `fluksio run`
 * writes, fsync'd, instead of writing the embedded database, which the commands that read
 * history bring up to date from these lines. The first line of a journal is `run.created`
 * and the last, once the run ended, `run.finished`.
 */
export const LocalJournalRecord = z.discriminatedUnion('type', [RunCreated, RunEvents, RunFinished]);
export type LocalJournalRecord = z.infer<typeof LocalJournalRecord>;

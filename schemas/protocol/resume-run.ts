import { z } from 'zod';
import { Claim } from './claim.js';
import { INT32_MAX } from '../int32.js';
import { LeaseId } from './lease-id.js';
import { StageRecord } from '../stage-record.js';

/**
 * `POST /api/v1/runs/:id/resume`: a runner restarted after it died (kill -9, the OOM
 * killer) asks to go on with a run it held, under the lease it recorded in its work
 * directory. Granted only while the run is still `running` under that lease, held by the
 * same runner, with no cancel pending (409 otherwise; 404 for another runner's run).
 * `fencing: 'epoch'` says the runner carries the reply's `epoch` in its writes; a runner
 * that does not (it predates epochs) is refused (400) and gives the run back, to be
 * retried in a new attempt: its writes could not be told from those of the process that
 * died, still in flight.
 */
export const ResumeRequest = z.strictObject({ lease: LeaseId, fencing: z.literal('epoch').optional() });
export type ResumeRequest = z.infer<typeof ResumeRequest>;

/**
 * What the runner needs to continue the same attempt: the claim again (the lease renewed
 * from now; `git.extraHeader` only for a run not started yet, which is checked out anew),
 * whether the run had started, and the sequence number its next event must carry, so
 * the events of the attempt are stored exactly once and none of the new ones is taken
 * for a duplicate. `finished` holds the records of the stages that finished in the
 * attempt: the runner keeps them as they are and executes only the others (an older
 * control plane sends none, and the runner then restores them from the cache). `epoch` is
 * the lease's epoch from now: every later heartbeat, start, event batch, finish and release
 * carries it, and those of an older epoch — the process that died — are refused (409).
 */
export const ResumeReply = z.strictObject({
  claim: Claim,
  started: z.boolean(),
  nextSeq: z.number().int().nonnegative(),
  epoch: z.number().int().positive().max(INT32_MAX),
  finished: z.array(StageRecord).default([]),
});
export type ResumeReply = z.infer<typeof ResumeReply>;

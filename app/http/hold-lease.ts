import type { RunnerRow } from '../../schemas/tables/runners.js';
import type { Run } from '../../schemas/tables/runs.js';
import type { Database } from '../../store/db/database.js';
import { HttpError } from './http-error.js';
import { loadRun, noSuchRun } from './load-run.js';

/**
 * The run a runner's request is about, once the runner is shown to hold `lease`: 404 for
 * an unknown run and, in the very same words, for another runner's (a runner token learns
 * nothing about runs that are not its own, not even that they exist), 409 when the lease
 * is stale (the run was released, requeued or abandoned since), or the `epoch` is not the
 * lease's (its runner was restarted and resumed the run since). With `running`, a run that
 * finished under this lease is stale too: reads (cache, blobs) and uploads are for a run
 * in progress. Writes are fenced again by the store in the statement that makes them — a
 * lease lost meanwhile changes nothing, and a finish retried under its lease is answered
 * as the first one was.
 */
export async function holdLease({
  db,
  runner,
  runId,
  lease,
  epoch,
  running = false,
}: {
  db: Database;
  runner: RunnerRow;
  runId: string;
  lease: string;
  /**
   * The lease's epoch the request carries, for a write that changes the run's state; reads
   * and content-addressed uploads carry none, and any epoch of the lease may make them.
   * @defaultValue not checked
   */
  epoch?: number;
  running?: boolean;
}): Promise<Run> {
  const run = await loadRun(db, runId);
  if (run.runnerName !== runner.name) throw noSuchRun(runId);
  if (run.leaseId !== lease || (running && run.status !== 'running')) throw staleLease(runId);
  if (epoch !== undefined && epoch !== run.leaseEpoch) throw staleLease(runId);
  return run;
}

/** 409: a write under a lease the run no longer has; nothing was changed. */
export function staleLease(runId: string): HttpError {
  return new HttpError(
    409,
    `lease: the lease is stale; run ${runId} was released, requeued or finished since it was claimed, or resumed by its restarted runner, and nothing was changed`,
    'lease',
  );
}

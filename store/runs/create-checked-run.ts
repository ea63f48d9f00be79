import { githubChecks } from '../../schemas/tables/github-checks.js';
import type { NewRun, Run } from '../../schemas/tables/runs.js';
import { createRun } from './create-run.js';
import { createQueuedRun } from './create-queued-run.js';
import type { Database } from '../db/database.js';

/**
 * Creates a run that reports to GitHub together with its check run's row (DESIGN §8), in
 * one transaction, unless a run holds its trigger key already: then the run that holds
 * it is returned, and its check row is made if it is missing — a worker killed between
 * the two statements of an earlier attempt left no half-made run behind, but a retry
 * still completes what a crash interrupted. `created` says whether this call made the run.
 */
export async function createCheckedRun({
  db,
  run,
  check,
  onlineWindowMs,
}: {
  db: Database;
  run: NewRun & { triggerKey: string; commit: string };
  check: { installationId: number; name: string };
  /**
   * For a queued run: the reason it waits for is written by the same INSERT
   * (createQueuedRun), with runners seen within this window. @defaultValue none written
   */
  onlineWindowMs?: number;
}): Promise<{ run: Run; created: boolean }> {
  return db.transaction(async (tx) => {
    const made =
      onlineWindowMs !== undefined && run.status === 'queued'
        ? await createQueuedRun({ db: tx, run: { ...run, status: 'queued' }, onlineWindowMs })
        : await createRun({ db: tx, run });
    await tx
      .insert(githubChecks)
      .values({
        runId: made.run.id,
        installationId: check.installationId,
        repository: made.run.repository,
        headSha: made.run.commit ?? run.commit,
        name: check.name,
      })
      .onConflictDoNothing({ target: githubChecks.runId });
    return made;
  });
}

import { and, eq } from 'drizzle-orm';
import { runs, type Run } from '../schemas/tables/runs.js';
import type { Database } from './database.js';
import { findBaseline } from './find-baseline.js';

/**
 * Fixes a finished run's baseline (DESIGN §7) once and for all: the clean success of its
 * pipeline at the nearest of the commits its submitter listed (else its own commit),
 * preferring equal params, never a member of its own sweep. From then on the run is shown against that run, never one
 * made later. A run whose baseline is fixed already keeps it. Returns the run as stored.
 */
export async function fixRunBaseline({ db, run }: { db: Database; run: Run }): Promise<Run> {
  if (run.baselineFixed) return run;
  const baseline = await findBaseline({
    db,
    repository: run.repository,
    pipelinePath: run.pipelinePath,
    commits: run.baselineCommits ?? (run.commit === null ? [] : [run.commit]),
    excludeRunId: run.id,
    excludeGroupId: run.groupId,
    paramsDigest: run.paramsDigest,
  });
  const [fixed] = await db
    .update(runs)
    .set({ baselineRunId: baseline?.id ?? null, baselineFixed: true })
    .where(and(eq(runs.id, run.id), eq(runs.baselineFixed, false)))
    .returning();
  return fixed ?? run;
}

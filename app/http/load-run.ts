import { eq } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../../store/db/database.js';
import { HttpError } from './http-error.js';

/**
 * The run with exactly this id, or 404. Unlike the CLI's findRun, an API path never
 * names a run by a prefix of its id.
 */
export async function loadRun(db: Database, runId: string): Promise<Run> {
  const [run] = await db.select().from(runs).where(eq(runs.id, runId));
  if (!run) throw noSuchRun(runId);
  return run;
}

/**
 * 404 for a run the caller may not see, in the same words as for one that does not exist:
 * neither a runner nor an API token learns whether another's run id exists.
 */
export function noSuchRun(runId: string, field = 'id'): HttpError {
  return new HttpError(404, `There is no run ${runId}`, field);
}

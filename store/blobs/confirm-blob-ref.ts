import { and, eq, sql } from 'drizzle-orm';
import { blobRefs } from '../../schemas/tables/blob-refs.js';
import type { Database } from '../db/database.js';

/**
 * Whether `repository` may read the blob `digest`, asked by run `runId` that is about to
 * rely on it (a runner's HEAD before skipping an upload, or its read of a cached out). A
 * yes also marks the ref confirmed now by that run, in the same statement, so that a
 * `fluksio gc` running meanwhile cannot collect a blob the run will name when it finishes.
 * The time never moves back (two confirmations racing): gc relies on every run that ever
 * confirmed the ref having been created at or before it (see gcStore).
 */
export async function confirmBlobRef({
  db,
  repository,
  digest,
  runId,
}: {
  db: Database;
  repository: string;
  digest: string;
  runId: string;
}): Promise<boolean> {
  const confirmed = await db
    .update(blobRefs)
    .set({ confirmedAt: sql`greatest(${blobRefs.confirmedAt}, now())`, confirmedBy: runId })
    .where(and(eq(blobRefs.repository, repository), eq(blobRefs.digest, digest)))
    .returning({ digest: blobRefs.digest });
  return confirmed.length > 0;
}

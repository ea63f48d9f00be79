import { sql } from 'drizzle-orm';
import { blobRefs } from '../../schemas/tables/blob-refs.js';
import type { Database } from '../db/database.js';

/**
 * Records that `repository` may read the blob `digest` because run `runId` uploaded it.
 * Adding it again marks it confirmed now by that run, so `fluksio gc` keeps it while the
 * run is unfinished (see blobRefs.confirmedAt); that time never moves back (see gcStore).
 */
export async function addBlobRef({
  db,
  repository,
  digest,
  size,
  runId,
}: {
  db: Database;
  repository: string;
  digest: string;
  size: number;
  runId: string;
}): Promise<void> {
  await db
    .insert(blobRefs)
    .values({ repository, digest, size, confirmedBy: runId })
    .onConflictDoUpdate({
      target: [blobRefs.repository, blobRefs.digest],
      set: { confirmedAt: sql`greatest(${blobRefs.confirmedAt}, now())`, confirmedBy: runId },
    });
}

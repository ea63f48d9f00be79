import { sql } from 'drizzle-orm';
import { blobUploads } from '../../schemas/tables/blob-uploads.js';
import type { Database } from '../db/database.js';
import { blobLockKey } from './blob-deletion-guard.js';

/**
 * Records that run `runId` is about to write the bytes of `digest` into the store, before
 * it does: `fluksio gc` then keeps the blob (openBlobDeletionGuard). Taken under a shared
 * lock on the digest, so it waits for a gc deleting that blob at this moment, whose delete
 * then comes before these bytes are written.
 */
export async function recordBlobUpload({
  db,
  digest,
  runId,
}: {
  db: Database;
  digest: string;
  runId: string;
}): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock_shared(hashtextextended(${blobLockKey(digest)}, 0))`);
    await tx
      .insert(blobUploads)
      .values({ digest, runId })
      .onConflictDoUpdate({
        target: [blobUploads.digest, blobUploads.runId],
        set: { startedAt: sql`now()` },
      });
  });
}

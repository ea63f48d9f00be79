import { blobRefs } from '../schemas/tables/blob-refs.js';
import type { Database } from './database.js';

/**
 * Records that `repository` may read the blob `digest` (its run uploaded it, or proved it
 * had it). Adding it again changes nothing.
 */
export async function addBlobRef({
  db,
  repository,
  digest,
  size,
}: {
  db: Database;
  repository: string;
  digest: string;
  size: number;
}): Promise<void> {
  await db.insert(blobRefs).values({ repository, digest, size }).onConflictDoNothing();
}

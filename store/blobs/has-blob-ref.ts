import { and, eq } from 'drizzle-orm';
import { blobRefs } from '../../schemas/tables/blob-refs.js';
import type { Database } from '../db/database.js';

/**
 * Whether `repository` may read the blob `digest`: blobs are shared by digest on disk, but
 * a run reads only what its own repository stored, so a digest learned elsewhere opens
 * nothing (DESIGN §6).
 */
export async function hasBlobRef({
  db,
  repository,
  digest,
}: {
  db: Database;
  repository: string;
  digest: string;
}): Promise<boolean> {
  const [ref] = await db
    .select({ digest: blobRefs.digest })
    .from(blobRefs)
    .where(and(eq(blobRefs.repository, repository), eq(blobRefs.digest, digest)));
  return ref !== undefined;
}

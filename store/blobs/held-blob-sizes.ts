import { and, eq, inArray } from 'drizzle-orm';
import { blobRefs } from '../../schemas/tables/blob-refs.js';
import type { Database } from '../db/database.js';

/** Digests per SELECT: one bind parameter each, far below Postgres's 65,535 per statement. */
const DIGESTS_PER_SELECT = 5000;

/**
 * The blobs among `digests` that `repository` holds a ref to (a run of it uploaded those
 * bytes, verified), with their sizes: what a stage of that repository may name as its
 * outputs (DESIGN §5). A digest absent from the map is held by no run of it.
 */
export async function heldBlobSizes({
  db,
  repository,
  digests,
}: {
  db: Database;
  repository: string;
  digests: readonly string[];
}): Promise<Map<string, number>> {
  const held = new Map<string, number>();
  const wanted = [...new Set(digests)];
  if (wanted.length === 0) return held;
  for (let start = 0; start < wanted.length; start += DIGESTS_PER_SELECT) {
    const rows = await db
      .select({ digest: blobRefs.digest, size: blobRefs.size })
      .from(blobRefs)
      .where(
        and(
          eq(blobRefs.repository, repository),
          inArray(blobRefs.digest, wanted.slice(start, start + DIGESTS_PER_SELECT)),
        ),
      );
    for (const { digest, size } of rows) held.set(digest, size);
  }
  return held;
}

import { eq } from 'drizzle-orm';
import { blobStoreBinding, type BlobStoreBindingRow } from '../../schemas/tables/blob-store-binding.js';
import type { Database } from '../db/database.js';

/** The blob store this database is bound to, or null before its first start with one. */
export async function readBlobStoreBinding(db: Database): Promise<BlobStoreBindingRow | null> {
  const [row] = await db.select().from(blobStoreBinding);
  return row ?? null;
}

/**
 * Binds the database to the store `storeId` at `location` unless it is bound already (a
 * replica starting at the same moment): resolves with the binding that holds.
 */
export async function bindToBlobStore(
  db: Database,
  storeId: string,
  location: string,
): Promise<BlobStoreBindingRow> {
  await db.insert(blobStoreBinding).values({ storeId, location }).onConflictDoNothing();
  const bound = await readBlobStoreBinding(db);
  if (!bound) throw new Error('the blob store binding vanished as it was written');
  return bound;
}

/** Records that the bound store (its id found there) is now at `location`: moved, with its id. */
export async function moveBlobStoreBinding(db: Database, location: string): Promise<void> {
  await db.update(blobStoreBinding).set({ location }).where(eq(blobStoreBinding.one, true));
}

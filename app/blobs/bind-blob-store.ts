import { randomUUID } from 'node:crypto';
import type { Database } from '../../store/db/database.js';
import {
  bindToBlobStore,
  moveBlobStoreBinding,
  readBlobStoreBinding,
} from '../../store/blobs/blob-store-binding.js';
import { STORE_ID_NAME, type BlobStorage } from './blob-storage.js';

/** The store is not this database's: nothing may be stored in it or collected from it. */
export class ForeignBlobStoreError extends Error {
  override readonly name = 'ForeignBlobStoreError';
}

/**
 * At the control plane's start: refuses a store that holds another database's id (a
 * second deployment pointed at the first's store), when this database is bound to a
 * store. Binds nothing: `fluksio gc --server`, which deletes, binds (bindBlobStore).
 */
export async function refuseForeignBlobStore(
  db: Database,
  storage: BlobStorage,
  setting: string,
): Promise<void> {
  const found = await storage.readStoreId();
  if (found === null) return;
  const bound = await readBlobStoreBinding(db);
  if (bound !== null && bound.storeId !== found) throw foreignStoreError(storage, found, bound, setting);
}

/**
 * Before `fluksio gc --server` deletes anything: checks that `storage` is the store this
 * database's blobs are in, and binds the two on the first gc with none: the database keeps
 * the store's id and location, the store keeps the id as STORE_ID_NAME at its root
 * (written after the database's row, so that an interrupted first binding is finished by
 * the next gc at the same location).
 *
 * Refused with ForeignBlobStoreError: a store holding another database's id; a store that
 * has an id when the database has none (a second deployment pointed at the first's
 * store); and a store without an id at another location than the one bound (a misnamed
 * bucket or directory). Such a store would take results the database cannot find later,
 * and `fluksio gc` would delete from it every blob another deployment keeps. A store
 * moved with its id is accepted at its new location. Resolves with the store's id.
 */
export async function bindBlobStore(db: Database, storage: BlobStorage, setting: string): Promise<string> {
  const found = await storage.readStoreId();
  let bound = await readBlobStoreBinding(db);
  if (bound === null) {
    if (found !== null) {
      throw new ForeignBlobStoreError(
        `The blob store ${storage.location} belongs to another fluksio database (its ${STORE_ID_NAME} is ${found}), ` +
          `and this database has none yet: two control planes sharing one store would lose each other's blobs to gc. ` +
          `Point ${setting} at a store of this database's own; or, if this database is the store's ` +
          `(restored from a backup), delete ${STORE_ID_NAME} from the store and run gc again.`,
      );
    }
    bound = await bindToBlobStore(db, randomUUID(), storage.location);
  }
  if (found === bound.storeId) {
    if (bound.location !== storage.location) await moveBlobStoreBinding(db, storage.location);
    return bound.storeId;
  }
  if (found !== null) throw foreignStoreError(storage, found, bound, setting);
  if (bound.location !== storage.location) {
    throw new ForeignBlobStoreError(
      `The blob store ${storage.location} is not this database's: it has no ${STORE_ID_NAME}, and this database's store ` +
        `(${bound.storeId}) is at ${bound.location}. Point ${setting} there; or, if its blobs were moved here, ` +
        `copy ${STORE_ID_NAME} (which holds ${bound.storeId}) along with them.`,
    );
  }
  // The first binding's second half, or an id deleted from the store at the same place.
  await storage.writeStoreId(bound.storeId);
  return bound.storeId;
}

function foreignStoreError(
  storage: BlobStorage,
  found: string,
  bound: { storeId: string; location: string },
  setting: string,
): ForeignBlobStoreError {
  return new ForeignBlobStoreError(
    `The blob store ${storage.location} belongs to another fluksio database (its ${STORE_ID_NAME} is ${found}; ` +
      `this database's store is ${bound.storeId}, last at ${bound.location}). Point ${setting} at this database's store.`,
  );
}

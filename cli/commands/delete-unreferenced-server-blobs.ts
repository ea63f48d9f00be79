import type { BlobStorage } from '../../app/blobs/blob-storage.js';
import { DirectoryBlobStorage } from '../../app/blobs/directory-blob-storage.js';
import { S3BlobStorage } from '../../app/blobs/s3-blob-storage.js';
import { deleteUnreferencedBlobs } from '../../local/delete-unreferenced-blobs.js';
import { openBlobDeletionGuard, type BlobDeletionOptions } from '../../store/blobs/blob-deletion-guard.js';
import type { Database } from '../../store/db/database.js';

/**
 * Deletes the control plane's blobs (files or objects) that `live` does not name and that
 * are older than `cutoffMs` (`fluksio gc --server`), each batch under the database's
 * deletion guard, so an upload of the same bytes landing meanwhile keeps its blob.
 */
export async function deleteUnreferencedServerBlobs({
  db,
  storage,
  live,
  cutoffMs,
  onDecided,
}: {
  db: Database;
  storage: BlobStorage;
  live: ReadonlySet<string>;
  cutoffMs: number;
  onDecided?: BlobDeletionOptions['onDecided'];
}): Promise<{ blobsDeleted: number }> {
  // Opened before the store is listed: an upload begun since keeps its blob.
  const guard = await openBlobDeletionGuard(db);
  const options: BlobDeletionOptions = { guard, ...(onDecided ? { onDecided } : {}) };
  if (storage instanceof S3BlobStorage) return storage.deleteUnreferenced(live, cutoffMs, options);
  if (storage instanceof DirectoryBlobStorage)
    return deleteUnreferencedBlobs(storage.root, live, cutoffMs, options);
  throw new Error(`gc cannot delete blobs from ${storage.location}: not a directory or S3 store`);
}

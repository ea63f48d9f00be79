import { and, gte, inArray, or, sql, type SQL } from 'drizzle-orm';
import { blobUploads } from '../../schemas/tables/blob-uploads.js';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * Deletes those of `digests` no upload stands in the way of, by calling `remove` with them
 * while uploads of those digests wait; resolves with the digests removed.
 */
export type BlobDeletionGuard = (
  digests: string[],
  remove: (digests: string[]) => Promise<void>,
) => Promise<string[]>;

/** How gc's deletions of blob files (local/delete-unreferenced-blobs.ts) or objects (S3BlobStorage) go. */
export interface BlobDeletionOptions {
  /**
   * Deletes a batch of chosen blobs unless an upload stands in the way (the control plane's
   * store, where uploads land while gc runs: openBlobDeletionGuard). Without it, at once.
   */
  guard?: BlobDeletionGuard;
  /** Called with each batch chosen, before it is deleted (a seam for tests of the race). */
  onDecided?: (digests: string[]) => Promise<void>;
  /** Stops the sweep before the next file is looked at (a first Ctrl-C). */
  signal?: AbortSignal;
}

/** The advisory lock key of a digest, shared by recordBlobUpload (shared) and the guard (exclusive). */
export function blobLockKey(digest: string): string {
  return `blob-upload:${digest}`;
}

/**
 * The guard `fluksio gc` deletes blob files or objects under (DESIGN §10): gc decides that
 * a blob is unnamed and old from a listing, and an upload of the same bytes (a new run's,
 * its ref recorded only after the bytes are written) may land between that decision and the
 * delete. Each upload is recorded (recordBlobUpload) before its bytes are written, under a
 * shared lock on its digest; the guard takes the digests' locks exclusively, leaves out
 * every digest an upload began writing since the guard was opened (before gc listed the
 * store) or that an unfinished run uploads, and deletes the rest before letting go. An
 * upload either was recorded first, and its blob is kept, or waits, and writes its bytes
 * after the delete. Open it before listing the store.
 */
export async function openBlobDeletionGuard(db: Database): Promise<BlobDeletionGuard> {
  const [opened] = await db.select({ now: sql<string>`now()::text` }).from(sql`(values (1)) as one (x)`);
  if (!opened) throw new Error('the database did not say what time it is');
  const since = opened.now;
  return (digests, remove) =>
    db.transaction(async (tx) => {
      const sorted = [...new Set(digests)].sort();
      // One at a time, in order: two guards never wait for each other crosswise.
      for (const digest of sorted) {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${blobLockKey(digest)}, 0))`);
      }
      const active = tx
        .select({ id: runs.id })
        .from(runs)
        .where(inArray(runs.status, ['queued', 'running']));
      const uploading = new Set<string>();
      for (let start = 0; start < sorted.length; start += DIGESTS_PER_QUERY) {
        const rows = await tx
          .selectDistinct({ digest: blobUploads.digest })
          .from(blobUploads)
          .where(
            and(
              inArray(blobUploads.digest, sorted.slice(start, start + DIGESTS_PER_QUERY)),
              or(gte(blobUploads.startedAt, sql`${since}::timestamptz`), inArray(blobUploads.runId, active)),
            ),
          );
        for (const { digest } of rows) uploading.add(digest);
      }
      const doomed = sorted.filter((digest) => !uploading.has(digest));
      if (doomed.length > 0) await remove(doomed);
      return doomed;
    });
}

const DIGESTS_PER_QUERY = 1000;

/** The upload records gc may forget: begun before `cutoff`, by a run no longer queued or running. */
export function forgettableUploads(cutoff: SQL): SQL | undefined {
  return and(
    sql`${blobUploads.startedAt} < ${cutoff}`,
    sql`${blobUploads.runId} not in (select ${runs.id} from ${runs} where ${runs.status} in ('queued', 'running'))`,
  );
}

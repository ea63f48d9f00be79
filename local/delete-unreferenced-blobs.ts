import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobDeletionOptions } from '../store/blobs/blob-deletion-guard.js';

/** What deleteUnreferencedBlobs removed. */
export interface BlobSweep {
  blobsDeleted: number;
  bytesFreed: number;
  /** The sweep was stopped (`signal`) before it went through every file: the rest stay. */
  stopped: boolean;
}

/** Blob files chosen per guarded batch. */
const BLOBS_PER_BATCH = 500;

/**
 * Deletes the blob files of a store laid out as DiskBlobStore lays it out
 * (`<root>/sha256/<2 hex>/<hex>`) that `live` does not name and that are older than
 * `cutoffMs`, and leftovers of interrupted writes (`<root>/tmp/`) older than a day. The
 * age matters: a stage still running has written blobs that nothing names until it ends.
 * The chosen files are deleted in batches, under `options.guard` when given. Aborting
 * `options.signal` stops it before the next file is looked at: the batch chosen so far is
 * left whole, and each deletion stands alone.
 */
export async function deleteUnreferencedBlobs(
  root: string,
  live: ReadonlySet<string>,
  cutoffMs: number,
  options: BlobDeletionOptions = {},
): Promise<BlobSweep> {
  const sweep: BlobSweep = { blobsDeleted: 0, bytesFreed: 0, stopped: false };
  const sizes = new Map<string, number>();
  const pathOf = (digest: string): string => {
    const hex = digest.slice('sha256:'.length);
    return join(root, 'sha256', hex.slice(0, 2), hex);
  };
  const flush = async (): Promise<void> => {
    const chosen = [...sizes.keys()];
    if (chosen.length === 0) return;
    await options.onDecided?.(chosen);
    const remove = async (digests: string[]): Promise<void> => {
      for (const digest of digests) await rm(pathOf(digest), { force: true });
    };
    const removed = options.guard ? await options.guard(chosen, remove) : (await remove(chosen), chosen);
    for (const digest of removed) {
      sweep.blobsDeleted += 1;
      sweep.bytesFreed += sizes.get(digest) ?? 0;
    }
    sizes.clear();
  };
  for (const folder of await readdir(join(root, 'sha256')).catch((): string[] => [])) {
    for (const name of await readdir(join(root, 'sha256', folder)).catch((): string[] => [])) {
      if (options.signal?.aborted) return { ...sweep, stopped: true };
      const digest = `sha256:${name}`;
      if (live.has(digest)) continue;
      const info = await stat(join(root, 'sha256', folder, name)).catch(() => null);
      if (info === null || info.mtimeMs >= cutoffMs) continue;
      sizes.set(digest, info.size);
      if (sizes.size >= BLOBS_PER_BATCH) await flush();
    }
  }
  if (options.signal?.aborted) return { ...sweep, stopped: true };
  await flush();
  for (const name of await readdir(join(root, 'tmp')).catch((): string[] => [])) {
    const path = join(root, 'tmp', name);
    const info = await stat(path).catch(() => null);
    if (info !== null && info.mtimeMs < Date.now() - 86_400_000) await rm(path, { force: true });
  }
  return sweep;
}

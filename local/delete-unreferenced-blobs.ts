import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** What deleteUnreferencedBlobs removed. */
export interface BlobSweep {
  blobsDeleted: number;
  bytesFreed: number;
  /** The sweep was stopped (`signal`) before it went through every file: the rest stay. */
  stopped: boolean;
}

/**
 * Deletes the blob files of a store laid out as DiskBlobStore lays it out
 * (`<root>/sha256/<2 hex>/<hex>`) that `live` does not name and that are older than
 * `cutoffMs`, and leftovers of interrupted writes (`<root>/tmp/`) older than a day. The
 * age matters: a stage still running has written blobs that nothing names until it ends.
 * Aborting `signal` stops it between two files: each deletion stands alone.
 */
export async function deleteUnreferencedBlobs(
  root: string,
  live: ReadonlySet<string>,
  cutoffMs: number,
  signal?: AbortSignal,
): Promise<BlobSweep> {
  const sweep: BlobSweep = { blobsDeleted: 0, bytesFreed: 0, stopped: false };
  for (const folder of await readdir(join(root, 'sha256')).catch((): string[] => [])) {
    for (const name of await readdir(join(root, 'sha256', folder)).catch((): string[] => [])) {
      if (signal?.aborted) return { ...sweep, stopped: true };
      if (live.has(`sha256:${name}`)) continue;
      const path = join(root, 'sha256', folder, name);
      const info = await stat(path).catch(() => null);
      if (info === null || info.mtimeMs >= cutoffMs) continue;
      await rm(path, { force: true });
      sweep.blobsDeleted += 1;
      sweep.bytesFreed += info.size;
    }
  }
  for (const name of await readdir(join(root, 'tmp')).catch((): string[] => [])) {
    const path = join(root, 'tmp', name);
    const info = await stat(path).catch(() => null);
    if (info !== null && info.mtimeMs < Date.now() - 86_400_000) await rm(path, { force: true });
  }
  return sweep;
}

import type { CacheEntry } from '../../schemas/cache-entry.js';
import { DirManifest } from '../../schemas/out-record.js';
import type { BlobStore } from '../ports.js';
import { messageOf } from '../../core/text/message-of.js';

/**
 * Why a cache hit's outs could not be restored, read without restoring them (what
 * `fluksio status` checks): a blob absent from the store, or a directory's manifest that
 * does not read back; null when every blob is there. Bytes are verified only when a run
 * restores them, so a corrupt file blob is found then, not here.
 */
export async function unrestorableOuts(blobs: BlobStore, entry: CacheEntry): Promise<string | null> {
  const missing = (digest: string) =>
    `cached outputs of run ${entry.runId} could not be restored (blob ${digest} is missing)`;
  for (const out of entry.outs) {
    if (!(await blobs.has(out.digest))) return missing(out.digest);
    if (out.kind !== 'dir') continue;
    let manifest: DirManifest;
    try {
      manifest = DirManifest.parse(JSON.parse((await blobs.getBytes(out.digest)).toString('utf8')));
    } catch (error) {
      const message = messageOf(error);
      return `cached outputs of run ${entry.runId} could not be restored: ${message}`;
    }
    for (const file of manifest.files) if (!(await blobs.has(file.digest))) return missing(file.digest);
  }
  return null;
}

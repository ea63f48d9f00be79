import type { BlobDigest } from '../../schemas/blob-digest.js';
import { manifestFiles, type ManifestRead } from '../../store/blobs/manifest-files.js';
import type { BlobStorage } from './blob-storage.js';

/** The largest directory manifest gc reads (one names each file of an out: JSON, ~100 bytes a file). */
export const MAX_MANIFEST_BYTES = 256 * 2 ** 20;

/**
 * The files a directory out's manifest in `storage` names, for `fluksio gc --server`; or
 * why it cannot say: the manifest is missing, larger than gc reads, or damaged. An error
 * of the store itself (unreachable, refused) rejects.
 */
export async function readBlobManifest(
  storage: BlobStorage,
  digest: BlobDigest,
  maxBytes = MAX_MANIFEST_BYTES,
): Promise<ManifestRead> {
  const size = await storage.size(digest);
  if (size === null) return { unreadable: `missing from ${storage.location}` };
  if (size > maxBytes)
    return {
      unreadable: `too large: ${size} bytes, more than the ${maxBytes} gc reads`,
    };
  const bytes = await storage.readSmall(digest, maxBytes);
  if (bytes === null) return { unreadable: `missing from ${storage.location}` };
  return manifestFiles(bytes);
}

import { createHash } from 'node:crypto';
import { lstat, open, readlink } from 'node:fs/promises';

/** The hash a repository names its objects with (`git init --object-format`). */
export type GitObjectFormat = 'sha1' | 'sha256';

/** Files up to this size are read whole; larger ones are hashed in chunks. */
const READ_WHOLE_LIMIT = 4 * 1024 * 1024;
const CHUNK_SIZE = 1024 * 1024;

/**
 * The id git gives a blob with these bytes: the hash of `"blob <length>\0"` followed
 * by the bytes, in the repository's object format. For a symlink git hashes the link's
 * target text, so pass those bytes (or use gitBlobIdOfFile).
 */
export function gitBlobId(bytes: Uint8Array, format: GitObjectFormat): string {
  return createHash(format).update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex');
}

/**
 * The blob id `git hash-object` would give a working-tree entry, computed in-process:
 * a regular file's bytes, or a symlink's target text (never what it points to).
 * Clean filters (`core.autocrlf`, LFS) are not applied: this hashes the bytes on disk.
 */
export async function gitBlobIdOfFile(absPath: string, format: GitObjectFormat): Promise<string> {
  const stats = await lstat(absPath);
  if (stats.isSymbolicLink()) return gitBlobId(await readlink(absPath, { encoding: 'buffer' }), format);
  if (!stats.isFile())
    throw new Error(`${absPath} is neither a regular file nor a symlink; git cannot hash it`);
  const handle = await open(absPath, 'r');
  try {
    const { size } = await handle.stat();
    if (size <= READ_WHOLE_LIMIT) return gitBlobId(await handle.readFile(), format);
    // Large files (a dataset nobody ignored) are streamed so memory stays bounded; the
    // header needs the length up front, so a file that grows or shrinks meanwhile is an error.
    const hash = createHash(format).update(`blob ${size}\0`);
    const buffer = Buffer.allocUnsafe(CHUNK_SIZE);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_SIZE, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      total += bytesRead;
    }
    if (total !== size) {
      throw new Error(`${absPath} changed while it was being hashed (${size} bytes became ${total})`);
    }
    return hash.digest('hex');
  } finally {
    await handle.close();
  }
}

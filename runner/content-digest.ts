import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { blobDigest } from '../schemas/blob-digest.js';
import { sha256Hex } from '../schemas/canonical-json.js';
import { isNeverCode } from './never-code.js';

/** A dep's content as it enters a cache key (DESIGN §5). */
export interface ContentDigest {
  kind: 'file' | 'dir';
  /** `sha256:<hex>`: of a file's bytes, or of a directory's sorted `relpath\0filedigest\n` lines. */
  digest: string;
  /** Bytes of the file, or the sum over the directory's files. */
  size: number;
}

/** Files hashed at once inside a directory: overlaps I/O without exhausting descriptors. */
const HASH_BATCH = 16;

/**
 * The digest of a dep's content. A file is the sha256 of its bytes, streamed; a directory
 * is the sha256 over its files' `relpath\0digest\n` lines sorted by path, recursively,
 * skipping `__pycache__`, `*.pyc` and `.fluksio`. Symlinks are followed, because a stage
 * reading the dep sees what they point to. A missing path throws an error naming it.
 */
export async function contentDigest(absPath: string): Promise<ContentDigest> {
  const stats = await stat(absPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new Error(`${absPath} does not exist`, { cause: error });
    throw error;
  });
  if (stats.isFile()) return { kind: 'file', ...(await hashFile(absPath)) };
  if (!stats.isDirectory()) throw new Error(`${absPath} is neither a file nor a directory`);

  const files: [string, string][] = [];
  await listFiles(absPath, '', new Set(), files);
  files.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; i < files.length; i += HASH_BATCH) {
    const hashed = await Promise.all(
      files.slice(i, i + HASH_BATCH).map(async ([rel, abs]) => ({ rel, ...(await hashFile(abs)) })),
    );
    for (const file of hashed) {
      lines.push(`${file.rel}\0${file.digest}\n`);
      size += file.size;
    }
  }
  return { kind: 'dir', digest: blobDigest(sha256Hex(lines.join(''))), size };
}

/** Appends `[relpath, abspath]` of every file under `absDir`; `ancestors` stops symlink loops. */
async function listFiles(
  absDir: string,
  relDir: string,
  ancestors: Set<string>,
  files: [string, string][],
): Promise<void> {
  const real = await realpath(absDir);
  if (ancestors.has(real)) throw new Error(`${absDir} leads back into ${real} through a symlink loop`);
  const inside = new Set(ancestors).add(real);
  for (const entry of await readdir(absDir, { withFileTypes: true })) {
    const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
    // The same things the code digest never counts: bytecode and fluksio's own store.
    if (isNeverCode(rel)) continue;
    const abs = path.join(absDir, entry.name);
    const stats = entry.isSymbolicLink() ? await stat(abs) : entry;
    if (stats.isDirectory()) await listFiles(abs, rel, inside, files);
    else if (stats.isFile()) files.push([rel, abs]);
    else throw new Error(`${abs} is neither a file nor a directory`);
  }
}

/** Digest and size of what was actually read, so a file written meanwhile stays consistent. */
async function hashFile(absPath: string): Promise<{ digest: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(absPath)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { digest: blobDigest(hash.digest('hex')), size };
}

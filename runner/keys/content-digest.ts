import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Stats } from 'node:fs';
import { readdir, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { blobDigest } from '../../schemas/blob-digest.js';
import type { DirManifest } from '../../schemas/out-record.js';
import { sha256Hex } from '../../core/canonical-json.js';
import { isNeverCode } from '../workspace/never-code.js';
import { fileStamp } from './file-stamp.js';

/** A dep's content as it enters a cache key (DESIGN §5). */
export interface ContentDigest {
  kind: 'file' | 'dir';
  /**
   * A file: `sha256:<hex>` of its bytes, prefixed with `100755 ` when its owner may
   * execute it (see fileDigestWithMode). A directory: `sha256:<hex>` of its sorted lines,
   * `relpath\0filedigest\n` for each file and `relpath/\0\n` for each empty directory.
   */
  digest: string;
  /** Bytes of the file, or the sum over the directory's files. */
  size: number;
  /**
   * Which version of each file was read, without reading it again: the sha256 over each
   * file's path and fileStamp. A file edited and put back while a stage ran has its old
   * digest but a new stamp.
   */
  stamp: string;
}

/** Files hashed at once inside a directory: overlaps I/O without exhausting descriptors. */
const HASH_BATCH = 16;

/**
 * The digest of a dep's content. A file is the sha256 of its bytes, streamed, with its
 * executable bit; a directory is the sha256 over its files' `relpath\0digest\n` lines
 * and its empty directories' `relpath/\0\n` lines sorted by path, recursively, skipping
 * `__pycache__`, `*.pyc` and `.fluksio`. Symlinks are followed, because a stage reading
 * the dep sees what they point to. A missing path throws an error naming it.
 */
export async function contentDigest(absPath: string): Promise<ContentDigest> {
  const stats = await stat(absPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new Error(`${absPath} does not exist`, { cause: error });
    throw error;
  });
  if (stats.isFile()) {
    return { kind: 'file', ...(await hashFile(absPath, stats.mode)), stamp: stampOf([stampLine('', stats)]) };
  }
  if (!stats.isDirectory()) throw new Error(`${absPath} is neither a file nor a directory`);

  const files: ListedFile[] = [];
  const lines: string[] = [];
  await listFiles(absPath, '', new Set(), files, lines);
  let size = 0;
  const stamps = files.map(({ rel, stats: fileStats }) => stampLine(rel, fileStats));
  for (let i = 0; i < files.length; i += HASH_BATCH) {
    const hashed = await Promise.all(
      files
        .slice(i, i + HASH_BATCH)
        .map(async ({ rel, abs, stats: fileStats }) => ({ rel, ...(await hashFile(abs, fileStats.mode)) })),
    );
    for (const file of hashed) {
      lines.push(`${file.rel}\0${file.digest}\n`);
      size += file.size;
    }
  }
  // Sorted as whole lines: "a/" and "a/b" order the same wherever the tree was read.
  lines.sort();
  return { kind: 'dir', digest: blobDigest(sha256Hex(lines.join(''))), size, stamp: stampOf(stamps) };
}

/**
 * The digest contentDigest gives a directory that holds exactly what a stored directory
 * out's manifest lists, computed from the manifest alone: what a stage downstream of that
 * out should find on disk, so that one whose folder another stage changed in place shows.
 * Bytecode and `.fluksio` are left out as contentDigest leaves them out, and a folder is
 * empty when nothing else is in it.
 */
export function manifestContentDigest(manifest: DirManifest): string {
  const counted = (rel: string) =>
    !rel.split('/').some((_, index, parts) => isNeverCode(parts.slice(0, index + 1).join('/')));
  const parentOf = (rel: string) => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '');
  const ancestors = (rel: string) =>
    rel
      .split('/')
      .slice(0, -1)
      .map((_, index, parts) => parts.slice(0, index + 1).join('/'));
  const files = manifest.files.filter((file) => counted(file.path));
  const dirs = new Set(
    [...manifest.files.map((file) => file.path), ...(manifest.dirs ?? []).map((dir) => `${dir}/x`)]
      .flatMap(ancestors)
      .filter(counted),
  );
  const holding = new Set([...files.map((file) => file.path), ...dirs].map(parentOf));
  const lines = [
    ...files.map((file) => `${file.path}\0${fileDigestWithMode(file.digest, file.executable)}\n`),
    ...[...dirs].filter((dir) => !holding.has(dir)).map((dir) => `${dir}/\0\n`),
  ];
  lines.sort();
  return blobDigest(sha256Hex(lines.join('')));
}

/** One file's line of a stamp: taken before its bytes are read, so a write in between shows. */
function stampLine(rel: string, stats: Stats): string {
  return `${rel}\0${fileStamp(stats.ino, stats.size, stats.mtimeMs)}\n`;
}

function stampOf(lines: string[]): string {
  return sha256Hex(lines.sort().join(''));
}

/**
 * A file's digest as a dep: its blob digest, prefixed with `100755 ` (git's mode) when
 * its owner may execute it, since a stage that runs the file behaves differently
 * without the bit. Non-executable files keep the bare blob digest, which is also what
 * their stored out records say.
 */
export function fileDigestWithMode(blob: string, executable: boolean): string {
  return executable ? `100755 ${blob}` : blob;
}

interface ListedFile {
  rel: string;
  abs: string;
  stats: Stats;
}

/**
 * Appends every file under `absDir` to `files` and a `relpath/\0\n` line for every
 * directory with nothing counted in it to `emptyDirs`; `ancestors` stops symlink loops.
 */
async function listFiles(
  absDir: string,
  relDir: string,
  ancestors: Set<string>,
  files: ListedFile[],
  emptyDirs: string[],
): Promise<void> {
  const real = await realpath(absDir);
  if (ancestors.has(real)) throw new Error(`${absDir} leads back into ${real} through a symlink loop`);
  const inside = new Set(ancestors).add(real);
  let counted = 0;
  for (const entry of await readdir(absDir, { withFileTypes: true })) {
    const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
    // The same things the code digest never counts: bytecode and fluksio's own store.
    if (isNeverCode(rel)) continue;
    counted += 1;
    const abs = path.join(absDir, entry.name);
    const stats = await stat(abs).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT' || !entry.isSymbolicLink()) throw error;
      throw new Error(
        `${abs} is a symlink to ${await readlink(abs)}, which does not exist: a directory dep may hold ` +
          'only files and directories a stage can read; remove the link or make its target',
        { cause: error },
      );
    });
    if (stats.isDirectory()) await listFiles(abs, rel, inside, files, emptyDirs);
    else if (stats.isFile()) files.push({ rel, abs, stats });
    else throw new Error(`${abs} is neither a file nor a directory`);
  }
  if (counted === 0 && relDir !== '') emptyDirs.push(`${relDir}/\0\n`);
}

/** Digest and size of what was actually read, so a file written meanwhile stays consistent. */
async function hashFile(absPath: string, mode: number): Promise<{ digest: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(absPath)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { digest: fileDigestWithMode(blobDigest(hash.digest('hex')), (mode & 0o100) !== 0), size };
}

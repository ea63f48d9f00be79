import { randomUUID } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { canonicalJson } from '../../core/canonical-json.js';
import { DirManifest, type OutRecord } from '../../schemas/out-record.js';
import { MissingOutError } from './missing-out-error.js';
import type { BlobStore } from '../ports.js';
import { resolveWorkspacePath } from '../workspace/workspace-path.js';
import { ASIDE_SUFFIX, RESTORE_SUFFIX } from './restore-leftovers.js';

/** Files stored or restored at once within a directory out. */
const BLOB_BATCH = 16;

/**
 * Stores a stage's out in the blob store and returns its record. A file becomes one
 * blob (its executable bit in the record); a directory becomes a blob per file plus a
 * DirManifest blob (canonical JSON, so equal trees give equal digests) listing its files
 * and its empty directories, whose digest is the record's. Symlinks are stored
 * as what they point to, and only when that stays inside the workspace, so an out can
 * never carry a file from elsewhere on the machine into the cache. Throws
 * MissingOutError when nothing exists at the out's path, UnsafePathError for a path
 * that leads outside the workspace.
 */
export async function storeOut(
  blobs: BlobStore,
  pipelineDir: string,
  workspaceRoot: string,
  outPath: string,
): Promise<OutRecord> {
  const repoPath = await workspacePathOf(pipelineDir, workspaceRoot, outPath);
  const absPath = await resolveWorkspacePath(workspaceRoot, repoPath, { out: true });
  const stats = await stat(absPath).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new MissingOutError(outPath, absPath, { cause: error }) : error;
  });
  if (stats.isFile()) {
    const stored = await blobs.putFile(absPath);
    return {
      path: outPath,
      kind: 'file',
      ...stored,
      ...(isExecutable(stats.mode) ? { executable: true } : {}),
    };
  }
  if (!stats.isDirectory()) throw new Error(`"${outPath}" is neither a file nor a directory (${absPath})`);

  const listed: { path: string; abs: string }[] = [];
  const emptyDirs: string[] = [];
  await listOutFiles(workspaceRoot, repoPath, absPath, '', new Set(), { files: listed, emptyDirs });
  listed.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const files: DirManifest['files'] = [];
  for (let i = 0; i < listed.length; i += BLOB_BATCH) {
    const stored = await Promise.all(
      listed.slice(i, i + BLOB_BATCH).map(async (file) => {
        const { mode } = await stat(file.abs);
        return { path: file.path, ...(await blobs.putFile(file.abs)), executable: isExecutable(mode) };
      }),
    );
    files.push(...stored);
  }
  const manifest: DirManifest = {
    version: 1,
    files,
    ...(emptyDirs.length > 0 ? { dirs: emptyDirs.sort() } : {}),
  };
  const { digest } = await blobs.putBytes(Buffer.from(canonicalJson(manifest)));
  const size = files.reduce((sum, file) => sum + file.size, 0);
  return { path: outPath, kind: 'dir', digest, size };
}

/**
 * Puts a stored out back at its path, every byte verified against its digest. The out
 * is assembled in a temporary sibling and swapped in only once complete, so a missing or
 * corrupt blob (BlobMissingError, BlobCorruptError) leaves the old path as it was and
 * nothing half-written. Files get their executable bits back, directories their empty
 * subdirectories. The path is
 * checked first: one that leads outside the workspace throws UnsafePathError and
 * touches nothing.
 */
export async function restoreOut(
  blobs: BlobStore,
  pipelineDir: string,
  workspaceRoot: string,
  record: OutRecord,
): Promise<void> {
  const repoPath = await workspacePathOf(pipelineDir, workspaceRoot, record.path);
  const absPath = await resolveWorkspacePath(workspaceRoot, repoPath, { out: true });
  const parent = path.dirname(absPath);
  await mkdir(parent, { recursive: true });
  const temp = path.join(parent, `.${path.basename(absPath)}.${randomUUID()}${RESTORE_SUFFIX}`);
  try {
    if (record.kind === 'file') {
      await blobs.getToFile(record.digest, temp, record.size);
      if (record.executable) await makeExecutable(temp);
    } else {
      await restoreDir(blobs, record.digest, temp);
    }
    await swapIntoPlace(temp, absPath, record.kind === 'dir');
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}

/**
 * Removes an out before its stage runs (DESIGN §5): a file, a directory with everything
 * in it, or a symlink itself, never what the symlink points to. An absent out is fine.
 * The path is checked like any other, except that its last component may be a symlink
 * pointing anywhere, since only the link is removed.
 */
export async function removeOut(pipelineDir: string, workspaceRoot: string, outPath: string): Promise<void> {
  const repoPath = await workspacePathOf(pipelineDir, workspaceRoot, outPath);
  const absPath = await resolveWorkspacePath(workspaceRoot, repoPath, { allowFinalSymlink: true, out: true });
  // fs.rm lstat-s what it removes: a symlink is unlinked, never followed.
  await rm(absPath, { recursive: true, force: true });
}

/** The out's path relative to the workspace root, `/`-separated; absolute paths stay absolute to be refused. */
async function workspacePathOf(pipelineDir: string, workspaceRoot: string, outPath: string): Promise<string> {
  if (path.posix.isAbsolute(outPath)) return outPath;
  // Both real, so a pipeline directory reached through a symlinked checkout still lies inside the root.
  const dirInRoot = path.relative(await realpath(workspaceRoot), await realpath(pipelineDir));
  return path.posix.join(dirInRoot.split(path.sep).join('/'), outPath);
}

/** What a directory out holds: its files and its empty directories, relative to it. */
interface OutTree {
  files: { path: string; abs: string }[];
  emptyDirs: string[];
}

/** Appends everything under a directory out; symlinks are followed once checked to stay inside. */
async function listOutFiles(
  workspaceRoot: string,
  repoPath: string,
  absDir: string,
  relDir: string,
  ancestors: Set<string>,
  tree: OutTree,
): Promise<void> {
  const real = await realpath(absDir);
  if (ancestors.has(real)) throw new Error(`${absDir} leads back into ${real} through a symlink loop`);
  const inside = new Set(ancestors).add(real);
  const entries = await readdir(absDir, { withFileTypes: true });
  if (entries.length === 0 && relDir !== '') tree.emptyDirs.push(relDir);
  for (const entry of entries) {
    const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
    const abs = path.join(absDir, entry.name);
    if (entry.isSymbolicLink()) await resolveWorkspacePath(workspaceRoot, `${repoPath}/${rel}`);
    const stats = entry.isSymbolicLink() ? await stat(abs) : entry;
    if (stats.isDirectory()) await listOutFiles(workspaceRoot, repoPath, abs, rel, inside, tree);
    else if (stats.isFile()) tree.files.push({ path: rel, abs });
    else throw new Error(`${abs} is neither a file nor a directory; a directory out may hold only files`);
  }
}

function isExecutable(mode: number): boolean {
  return (mode & 0o100) !== 0;
}

/** As git checks out an executable: runnable by whoever may read it. */
async function makeExecutable(absPath: string): Promise<void> {
  const { mode } = await stat(absPath);
  await chmod(absPath, mode | ((mode & 0o444) >> 2));
}

/** A manifest may come from a remote cache: its paths must stay inside the directory. */
function checkManifestPath(digest: BlobDigest, relPath: string): void {
  if (!relPath.split('/').every((part) => part !== '' && part !== '.' && part !== '..')) {
    throw new Error(`Manifest ${digest} lists "${relPath}"; expected a plain relative path`);
  }
}

async function restoreDir(blobs: BlobStore, digest: BlobDigest, tempDir: string): Promise<void> {
  const manifest = DirManifest.parse(JSON.parse((await blobs.getBytes(digest)).toString('utf8')));
  await mkdir(tempDir);
  for (const dir of manifest.dirs ?? []) {
    checkManifestPath(digest, dir);
    await mkdir(path.join(tempDir, dir), { recursive: true });
  }
  for (let i = 0; i < manifest.files.length; i += BLOB_BATCH) {
    await Promise.all(
      manifest.files.slice(i, i + BLOB_BATCH).map(async (file) => {
        checkManifestPath(digest, file.path);
        const target = path.join(tempDir, file.path);
        await blobs.getToFile(file.digest, target, file.size);
        if (file.executable) await makeExecutable(target);
      }),
    );
  }
}

/** Renames `temp` to `dest`; a directory on either side is first moved aside, then removed. */
async function swapIntoPlace(temp: string, dest: string, tempIsDir: boolean): Promise<void> {
  const existing = await lstat(dest).catch(() => null);
  if (existing === null || (!existing.isDirectory() && !tempIsDir)) {
    await rename(temp, dest);
    return;
  }
  const aside = path.join(path.dirname(dest), `.${path.basename(dest)}.${randomUUID()}${ASIDE_SUFFIX}`);
  await rename(dest, aside);
  try {
    await rename(temp, dest);
  } catch (error) {
    await rename(aside, dest);
    throw error;
  }
  await rm(aside, { recursive: true, force: true });
}

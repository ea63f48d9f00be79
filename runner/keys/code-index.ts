import { existsSync, lstatSync, type Stats } from 'node:fs';
import { readlink } from 'node:fs/promises';
import path from 'node:path';
import { sha256Hex } from '../../core/canonical-json.js';
import { gitFileMode } from '../workspace/git-file-mode.js';
import { gitBlobId, gitBlobIdOfFile, type GitObjectFormat } from '../workspace/git-blob-id.js';
import { NotAGitRepositoryError } from '../workspace/not-a-git-repository-error.js';
import { FileStamps } from './file-stamps.js';
import { loadStatCache, RACY_WINDOW_MS, StatCache } from './stat-cache.js';
import {
  dropListingSnapshot,
  environmentKey,
  listingGuards,
  listingSnapshotFile,
  listingSnapshotHolds,
  loadListingSnapshot,
  saveListingSnapshot,
} from '../workspace/listing-snapshot.js';
import { UnsafePathError } from '../workspace/unsafe-path-error.js';
import { changedPaths } from '../workspace/changed-paths.js';
import { findRepoRoot } from '../workspace/find-repo-root.js';
import { listWorkTree, type WorkTreeListing } from '../workspace/work-tree-listing.js';
import { REPOSITORY_CONFIG_GUARD, type RepositoryConfigGuard } from '../workspace/repository-config-guard.js';
import { resolveWorkspacePath } from '../workspace/workspace-path.js';

/** The files of a work tree as a stage would read them now: what code digests are made from. */
export interface CodeIndex {
  /** The work tree's top-level directory, as git reports it (absolute). */
  repoRoot: string;
  /** HEAD's commit; null while HEAD is unborn (no commit yet). */
  commit: string | null;
  objectFormat: GitObjectFormat;
  /**
   * Repository-relative posix path → `<mode> <id>`, with git's modes: `100644` or `100755`
   * and the blob id of the file's bytes as they are on disk (no clean filter, no line-ending
   * conversion); `120000` and the blob id of a symlink's target text; `160000` and a
   * submodule's commit, followed by `+<sha256>` of its files when its work tree differs
   * from that commit.
   */
  files: Map<string, string>;
  /**
   * The fileStamp (inode, size, mtime, from the lstat the read took anyway) of each path of
   * `files` that is on disk: two reads around a stage tell a file it rewrote and put back,
   * which has its old id (recheckStageInputs). A submodule's is a sha256 over its files'.
   */
  stamps: FileStamps;
  /** Paths that differ from HEAD as `git status` would see them: modified, added, untracked or deleted. */
  changed: Set<string>;
  /**
   * Paths that cannot be code, path → the sentence refusing them (see codeDigest): a
   * symlink leading outside the repository, whose target can change with no id changing,
   * and a file whose name is not UTF-8 (`paths` holds it with U+FFFD for the bytes that
   * are not), which cannot be read back by that name. Such a file is not in `files`.
   */
  refused: Map<string, string>;
  /** Where the stat cache this read used lives (null: none): a read again uses the same. */
  statCacheFile: string | null;
  /** Whether this read distrusted the repository's config (see ReadCodeIndexOptions): a read again does too. */
  distrustsRepositoryConfig?: boolean;
  /** The files this read hashed; the stat cache vouched for the others. */
  filesRead: number;
  /** Whether git was asked what the work tree holds; false when the last answer still held. */
  gitListed: boolean;
}

export interface ReadCodeIndexOptions {
  /**
   * Where the stat cache lives between reads: the blob id of each file with the stat it
   * was read under, so an unchanged file is not read again. Null keeps none.
   * @defaultValue `<repository root>/.fluksio/code-stat-cache`
   */
  statCacheFile?: string | null;
  /**
   * Code the reader does not trust could write the repository's git state (a runner's
   * checkout): git then runs nothing its config names (repository-config-guard.ts), in
   * nested repositories too. @defaultValue false
   */
  distrustRepositoryConfig?: boolean;
}

/** Files hashed at once: enough to overlap I/O, few enough to stay under fd limits. */
const HASH_BATCH = 32;

/**
 * Reads what every file of the repository containing `dir` holds now, as `git add`
 * would record it (mode and blob id) but over the bytes a stage reads: tracked files,
 * untracked files that are not ignored, and submodules with their own changes. Only
 * files whose inode, size, mtime or ctime differ from the stat cache's are read;
 * git's own index is not trusted for that. Bytecode and `.fluksio/` are left out.
 * Throws NotAGitRepositoryError outside a git work tree.
 */
export async function readCodeIndex(dir: string, options: ReadCodeIndexOptions = {}): Promise<CodeIndex> {
  // git names paths from the top of the work tree, which holds `.git`; from anywhere
  // else, the top is looked for.
  const guard = options.distrustRepositoryConfig ? REPOSITORY_CONFIG_GUARD : null;
  const repoRoot = existsSync(path.join(dir, '.git')) ? dir : await topLevelOf(dir);
  const scanStartedMs = Date.now();
  const statCacheFile =
    options.statCacheFile === undefined ? await defaultStatCacheFile(repoRoot) : options.statCacheFile;
  // git's last answer stands while nothing it read has changed (listing-snapshot.ts):
  // starting git costs a warm read more than all the rest. The environment is the one
  // git inherits from this process.
  const snapshotFile = statCacheFile === null ? null : listingSnapshotFile(statCacheFile);
  const snapshot = snapshotFile === null ? null : loadListingSnapshot(snapshotFile);
  const reused = snapshot !== null && listingSnapshotHolds(snapshot, process.env) ? snapshot.listing : null;
  // Else git first: it has the most to do, and the rest overlaps it.
  const listing =
    reused !== null
      ? Promise.resolve(reused)
      : listWorkTree(repoRoot, guard).catch((error: unknown) => {
          throw notARepository(repoRoot, error);
        });
  // Awaited below; this only keeps a failure meanwhile from leaving its rejection unhandled.
  listing.catch(() => {});
  const loaded = statCacheFile === null ? null : loadStatCache(statCacheFile);
  // While git lists the tree, the files the cache knows are checked: most of them are
  // the files git is about to name.
  const known = new StatCache(statCacheFile, loaded?.objectFormat ?? 'sha1', loaded, scanStartedMs);
  await checkKnownFiles(repoRoot, known);
  const listed = await listing;
  const { commit, objectFormat } = listed;
  const cache =
    objectFormat === known.objectFormat
      ? known
      : new StatCache(statCacheFile, objectFormat, null, scanStartedMs);
  const reads = { files: 0 };
  const tree = await indexWorkTree({
    root: repoRoot,
    top: repoRoot,
    prefix: '',
    listing: listed,
    cache,
    reads,
    guard,
  });
  await cache.save([...listed.paths.keys()]);
  if (snapshotFile !== null && reused === null) {
    // Submodules and nested repositories have git state of their own: git is asked each time.
    const nested = [...tree.files.values()].some((value) => value.startsWith('160000 '));
    const guards = nested
      ? null
      : listingGuards({
          root: repoRoot,
          listing: listed,
          environment: process.env,
          scanStartedMs,
          racyWindowMs: RACY_WINDOW_MS,
        });
    if (guards !== null) {
      await saveListingSnapshot(snapshotFile, {
        listing: listed,
        guards,
        environment: environmentKey(process.env),
      });
    } else if (snapshot !== null) {
      await dropListingSnapshot(snapshotFile);
    }
  }
  return {
    repoRoot,
    commit,
    objectFormat,
    ...tree,
    statCacheFile,
    distrustsRepositoryConfig: guard !== null,
    filesRead: reads.files,
    gitListed: reused === null,
  };
}

/**
 * `.fluksio/code-stat-cache` in the work tree, or null (no persisted cache) when
 * `.fluksio` is a symlink leading elsewhere: a repository must not make fluksio write
 * outside it by committing one.
 */
async function defaultStatCacheFile(repoRoot: string): Promise<string | null> {
  const relPath = '.fluksio/code-stat-cache';
  // Neither component a symlink, as in any store fluksio made: the path is safe as it is,
  // known from two lstats here rather than the round trips of resolving it while git runs.
  const components = [`${repoRoot}/.fluksio`, `${repoRoot}/${relPath}`];
  if (components.every((component) => lstatOrNull(component)?.isSymbolicLink() === false)) {
    return path.join(path.resolve(repoRoot), relPath);
  }
  try {
    return await resolveWorkspacePath(repoRoot, relPath);
  } catch (error) {
    if (error instanceof UnsafePathError) return null;
    throw error;
  }
}

/** Files lstat-ed between two turns of the event loop, so git's output keeps flowing meanwhile. */
const LSTAT_CHUNK = 256;

/**
 * Looks up every file the stat cache knows under its lstat now (`StatCache.hit` then
 * answers for it), synchronously in chunks: far cheaper than a promise per file, and no
 * Stats object outlives its comparison.
 */
async function checkKnownFiles(root: string, cache: StatCache): Promise<void> {
  const paths = cache.knownPaths;
  for (let entry = 0; entry < paths.length; entry += 1) {
    const stats = lstatOrNull(`${root}/${paths[entry] as string}`);
    if (stats !== null) cache.lookupEntry(entry, stats);
    if (entry % LSTAT_CHUNK === LSTAT_CHUNK - 1) await new Promise((resolve) => setImmediate(resolve));
  }
}

/** One work tree being indexed: the repository's own, or a submodule's inside it. */
interface TreeScan {
  root: string;
  /** The outermost repository's root: symlinks must stay inside it. */
  top: string;
  /** `root` relative to `top`, with a trailing `/`; '' for the outermost. */
  prefix: string;
  listing: WorkTreeListing;
  cache: StatCache;
  /** Counts the files hashed, submodules' included. */
  reads: { files: number };
  /** How git is run in this tree and the ones nested in it. */
  guard: RepositoryConfigGuard | null;
}

type IndexedTree = Pick<CodeIndex, 'files' | 'stamps' | 'changed' | 'refused'>;

async function indexWorkTree(scan: TreeScan): Promise<IndexedTree> {
  const { root, listing } = scan;
  const files = new Map<string, string>();
  const stamps = new FileStamps();
  const refused = new Map<string, string>();
  const toHash: { repoPath: string; stats: Stats }[] = [];
  const nested: { repoPath: string; indexed: string | null }[] = [];
  for (const [repoPath, indexed] of listing.paths) {
    const key = scan.prefix + repoPath;
    const quoted = listing.notUtf8.get(repoPath);
    if (quoted !== undefined) {
      refused.set(repoPath, notUtf8Reason(scan.prefix, quoted));
      continue;
    }
    const gitlink = indexed?.startsWith('160000 ') ?? false;
    const known = gitlink ? null : scan.cache.hit(key);
    if (known !== null) {
      files.set(repoPath, known);
      scan.cache.stampHit(key, stamps, repoPath);
      continue;
    }
    const stats = lstatOrNull(`${root}/${repoPath}`);
    if (stats !== null && !stats.isDirectory()) stamps.add(repoPath, stats.ino, stats.size, stats.mtimeMs);
    if (stats === null || (gitlink && !stats.isDirectory())) {
      // A sparse checkout's absent file, or a submodule never cloned, is what the
      // commit says it is; anything else absent is deleted.
      if (indexed !== null && (listing.skipWorktree.has(repoPath) || gitlink)) files.set(repoPath, indexed);
    } else if (stats.isDirectory()) {
      // Only a repository is a directory entry of its own (a submodule, or an untracked
      // clone `git add` would record as one); other directories' files are listed one by one.
      if (gitlink || indexed === null) nested.push({ repoPath, indexed });
    } else if (stats.isSymbolicLink()) {
      const target = await readlink(path.join(root, repoPath), { encoding: 'buffer' });
      files.set(repoPath, `120000 ${gitBlobId(target, listing.objectFormat)}`);
      const outside = await outsideReason(scan, repoPath);
      if (outside !== null) refused.set(repoPath, outside);
    } else if (stats.isFile()) {
      const value = scan.cache.lookup(key, stats);
      if (value === null) toHash.push({ repoPath, stats });
      else files.set(repoPath, value);
    } else {
      throw new Error(
        `${path.join(root, repoPath)} is neither a file, a symlink nor a directory; git cannot record it`,
      );
    }
  }
  scan.reads.files += toHash.length;
  for (let i = 0; i < toHash.length; i += HASH_BATCH) {
    await Promise.all(
      toHash.slice(i, i + HASH_BATCH).map(async ({ repoPath, stats }) => {
        // The stat taken before reading: a write during the read leaves a stat the next scan will not match.
        const value = `${gitFileMode(stats)} ${await gitBlobIdOfFile(path.join(root, repoPath), listing.objectFormat)}`;
        scan.cache.remember(scan.prefix + repoPath, stats, value);
        files.set(repoPath, value);
      }),
    );
  }
  await Promise.all(
    nested.map(async ({ repoPath, indexed }) => {
      const submodule = await submoduleId(scan, repoPath, refused);
      if (submodule !== null) {
        files.set(repoPath, submodule.id);
        stamps.addStamp(repoPath, submodule.stamp);
      } else if (indexed !== null) files.set(repoPath, indexed);
    }),
  );
  return { files, stamps, changed: await changedPaths(root, listing, files, scan.guard), refused };
}

function lstatOrNull(absPath: string): Stats | null {
  try {
    return lstatSync(absPath, { throwIfNoEntry: false }) ?? null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw error;
  }
}

/**
 * A checked-out submodule (or untracked clone) as one entry: `160000 <commit>` while its
 * work tree equals its commit, else followed by `+<sha256>` over its own index's
 * entries, so an uncommitted or untracked change inside it changes the id; and its stamp,
 * a sha256 over its files' stamps. Null when the directory is not a repository (a
 * submodule that was never cloned).
 */
async function submoduleId(
  scan: TreeScan,
  repoPath: string,
  refused: Map<string, string>,
): Promise<{ id: string; stamp: string } | null> {
  const root = path.join(scan.root, repoPath);
  if (!existsSync(path.join(root, '.git'))) return null;
  const listing = await listWorkTree(root, scan.guard);
  const cache =
    listing.objectFormat === scan.listing.objectFormat
      ? scan.cache
      : new StatCache(null, listing.objectFormat, null, Date.now());
  const prefix = `${scan.prefix}${repoPath}/`;
  const inner = await indexWorkTree({ ...scan, root, prefix, listing, cache });
  for (const [innerPath, reason] of inner.refused) refused.set(`${repoPath}/${innerPath}`, reason);
  const commit = listing.commit ?? 'unborn';
  const stamp = sha256Hex(linesOf(inner.stamps.entries()));
  if (inner.changed.size === 0 && listing.commit !== null) return { id: `160000 ${commit}`, stamp };
  return { id: `160000 ${commit}+${sha256Hex(linesOf(inner.files))}`, stamp };
}

/** `path\0value\n` for each entry, sorted by path. */
function linesOf(entries: Iterable<[string, string]>): string {
  const sorted = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return sorted.map(([file, value]) => `${file}\0${value}\n`).join('');
}

/**
 * Why a file named in bytes that are not UTF-8 may not be code: its name reached fluksio
 * with those bytes replaced, so its content cannot be read and an edit would change no
 * key. `quoted` is the name within its repository (`prefix`: a submodule's) as git shows it.
 */
function notUtf8Reason(prefix: string, quoted: string): string {
  const name = prefix === '' ? quoted : `${quoted} in submodule ${prefix.slice(0, -1)}`;
  return (
    `Code file ${name} is named in bytes that are not UTF-8: fluksio cannot read it by that name, so ` +
    `it could not see an edit to it and refuses it. Rename it to a UTF-8 name (git mv), or leave it ` +
    `out of the code scope (narrower \`code:\` globs, or .gitignore for an untracked file)`
  );
}

/**
 * Why a symlink may not be code, or null when it stays inside the repository. Deps are
 * refused the same way (DESIGN §5): what a link outside points to can change without
 * anything in the repository changing, so no key could notice.
 */
async function outsideReason(scan: TreeScan, repoPath: string): Promise<string | null> {
  try {
    await resolveWorkspacePath(scan.top, scan.prefix + repoPath);
    return null;
  } catch (error) {
    // A link that loops leads nowhere: a stage reading it fails wherever it sits.
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return null;
    if (!(error instanceof UnsafePathError)) throw error;
    return (
      `Code file ${error.message}: fluksio cannot see that target change, so it refuses such a ` +
      `link as it refuses a dep outside the repository. Copy the target into the repository, or ` +
      `leave the link out of the code scope (narrower \`code:\` globs, or .gitignore for an untracked link)`
    );
  }
}

async function topLevelOf(dir: string): Promise<string> {
  try {
    return await findRepoRoot(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new Error(`${dir} does not exist or is not a directory; expected the repository to run in`, {
        cause: error,
      });
    }
    throw error;
  }
}

function notARepository(dir: string, reason: unknown): unknown {
  const message = reason instanceof Error ? reason.message : '';
  // "must be run in a work tree": a bare repository or the inside of .git.
  if (/not a git repository|must be run in a work tree/i.test(message)) {
    return new NotAGitRepositoryError(dir, { cause: reason });
  }
  return reason;
}

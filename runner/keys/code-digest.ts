import path from 'node:path';
import picomatch from 'picomatch';
import { sha256Hex } from '../../core/canonical-json.js';
import type { CodeIndex } from './code-index.js';
import { UnsafePathError } from '../workspace/unsafe-path-error.js';

/** Which files of the repository a code digest covers (DESIGN §3, §5). */
export interface CodeScope {
  /** Repository-relative posix directory of the pipeline file; '' at the root. */
  pipelineDir: string;
  /**
   * The `code` globs, relative to the pipeline's directory; a glob starting with `/` is
   * anchored at the repository root. Null covers every file of the repository.
   */
  include: string[] | null;
  /**
   * Repository-relative posix paths left out: the stage's own deps (they enter the key
   * through their content) and every out. A directory leaves out everything under it.
   */
  exclude: string[];
}

export interface CodeDigest {
  /** Hex sha256 over the lines `path\0mode id\n` of the files in scope, sorted by path. */
  digest: string;
  /** The files in scope as sorted `[path, "mode id"]` pairs: what "why it re-ran" compares. */
  entries: [string, string][];
}

/**
 * The digest of the code a stage's result may depend on: the sorted (path, mode and
 * blob id) pairs of the files in `scope`, taken from a CodeIndex, so no file is read
 * here. Ids hash the bytes as git hashes a blob, hence equal files give an equal digest
 * in every clone and checkout. A path in scope the index refuses (a symlink leading
 * outside the repository, a name that is not UTF-8) throws UnsafePathError: it could
 * change with no id changing.
 */
export function codeDigest(index: CodeIndex, scope: CodeScope): CodeDigest {
  const included = includeMatcher(scope);
  const excluded = new Set(scope.exclude.map((excludedPath) => excludedPath.replace(/\/+$/, '')));
  const entries: [string, string][] = [];
  for (const [repoPath, reason] of index.refused) {
    if (included(repoPath) && !isExcluded(repoPath, excluded)) throw new UnsafePathError(repoPath, reason);
  }
  for (const [repoPath, id] of index.files) {
    if (included(repoPath) && !isExcluded(repoPath, excluded)) entries.push([repoPath, id]);
  }
  // git lists paths mostly in order already; checking costs less than sorting them again.
  if (!isSorted(entries)) entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const lines = entries.map(([repoPath, id]) => `${repoPath}\0${id}\n`).join('');
  return { digest: sha256Hex(lines), entries };
}

function isSorted(entries: [string, string][]): boolean {
  for (let i = 1; i < entries.length; i += 1) {
    if ((entries[i - 1] as [string, string])[0] > (entries[i] as [string, string])[0]) return false;
  }
  return true;
}

function includeMatcher(scope: CodeScope): (repoPath: string) => boolean {
  if (scope.include === null) return () => true;
  const patterns = scope.include.map((glob) =>
    glob.startsWith('/') ? glob.slice(1) : path.posix.join(scope.pipelineDir, glob),
  );
  if (patterns.length === 0) return () => false;
  return picomatch(patterns, { dot: true });
}

/** Whether the path or one of its parent directories is excluded. */
function isExcluded(repoPath: string, excluded: Set<string>): boolean {
  if (excluded.size === 0) return false;
  for (let end = repoPath.length; end > 0; end = repoPath.lastIndexOf('/', end - 1)) {
    if (excluded.has(repoPath.slice(0, end))) return true;
  }
  return false;
}

/**
 * What changed between two code digests' entries, as "why it re-ran" prints it:
 * `['helpers.py changed', 'gen.sh mode 100755 → 100644', 'features.py added',
 * 'old.py removed', 'and 3 more files']`.
 * Paths are repository-relative; changed files come first, then added, then removed,
 * each sorted; at most `limit` files are named and the rest are counted.
 */
export function describeCodeChanges(
  before: [string, string][],
  after: [string, string][],
  limit = 5,
): string[] {
  const old = new Map(before);
  const now = new Map(after);
  const changed: string[] = [];
  const added: string[] = [];
  for (const [repoPath, id] of now) {
    const previous = old.get(repoPath);
    if (previous === undefined) added.push(repoPath);
    else if (previous !== id) changed.push(repoPath);
  }
  const removed = [...old.keys()].filter((repoPath) => !now.has(repoPath));
  const all = [
    ...changed
      .sort()
      .map((repoPath) => describeChange(repoPath, old.get(repoPath) ?? '', now.get(repoPath) ?? '')),
    ...added.sort().map((repoPath) => `${repoPath} added`),
    ...removed.sort().map((repoPath) => `${repoPath} removed`),
  ];
  if (all.length <= limit) return all;
  const rest = all.length - limit;
  return [...all.slice(0, limit), `and ${rest} more ${rest === 1 ? 'file' : 'files'}`];
}

/** `gen.sh mode 100755 → 100644` when only the mode differs, else `gen.sh changed`. */
function describeChange(repoPath: string, before: string, after: string): string {
  const [modeBefore, idBefore] = before.split(' ');
  const [modeAfter, idAfter] = after.split(' ');
  if (idBefore !== undefined && idBefore === idAfter && modeBefore !== modeAfter) {
    return `${repoPath} mode ${modeBefore} → ${modeAfter}`;
  }
  return `${repoPath} changed`;
}

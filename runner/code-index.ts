import { access, lstat } from 'node:fs/promises';
import path from 'node:path';
import { GitError, simpleGit, type SimpleGit } from 'simple-git';
import { gitBlobIdOfFile, type GitObjectFormat } from './git-blob-id.js';
import { NotAGitRepositoryError } from './not-a-git-repository-error.js';

/** The files of a work tree as git would commit them now: what code digests are made from. */
export interface CodeIndex {
  /** The work tree's top-level directory, as git reports it (absolute). */
  repoRoot: string;
  /** HEAD's commit; null while HEAD is unborn (no commit yet). */
  commit: string | null;
  objectFormat: GitObjectFormat;
  /** Repository-relative posix path → git blob id (a gitlink's commit id) in the working tree. */
  files: Map<string, string>;
  /** Paths whose working-tree id differs from HEAD's: modified, added, untracked or deleted. */
  changed: Set<string>;
}

/** Python bytecode and fluksio's own directory are never code (DESIGN §5), wherever they sit. */
const NEVER_CODE = /(?:^|\/)(?:__pycache__|\.fluksio)(?:\/|$)|\.pyc$/;

/** Whether a repository-relative posix path is Python bytecode or under `.fluksio/`. */
export function isNeverCode(repoPath: string): boolean {
  return NEVER_CODE.test(repoPath);
}

/** Changed entries hashed at once: enough to overlap I/O, few enough to stay under fd limits. */
const HASH_BATCH = 32;

/**
 * Reads which blob every file of the repository containing `repoRoot` would have if the
 * working tree were committed now. HEAD's tree comes from `git ls-tree`; only the paths
 * `git status` reports as modified, added, untracked (not ignored) or deleted are then
 * read and hashed in-process, so an unchanged file is never opened. Bytecode and
 * `.fluksio/` are left out; submodules stay in, as their commit id. Throws
 * NotAGitRepositoryError outside a git work tree.
 */
export async function readCodeIndex(repoRoot: string): Promise<CodeIndex> {
  const git = gitIn(repoRoot);
  // Three processes at once: their start-up, not their work, dominates on small trees.
  const [head, tree, status] = await Promise.allSettled([
    // `--verify -q` prints nothing and exits 1 for an unborn HEAD, after the first two lines.
    git.raw(['rev-parse', '--show-toplevel', '--show-object-format', '--verify', '-q', 'HEAD']),
    git.raw(['ls-tree', '-r', '-z', '--full-tree', 'HEAD']),
    // `--branch` adds a "## main" header: simple-git waits 50 ms longer for a process that
    // printed nothing, which a clean tree's status otherwise is.
    git.raw(['status', '--porcelain=v1', '-z', '--branch', '--untracked-files=all', '--no-renames']),
  ]);
  if (head.status === 'rejected') throw notARepository(repoRoot, head.reason);
  const [toplevel = '', format, commitLine] = head.value.split('\n');
  if (format !== 'sha1' && format !== 'sha256') {
    throw new Error(`git rev-parse in ${repoRoot} reported an unknown object format "${format}"`);
  }
  const commit = commitLine ? commitLine : null;
  if (status.status === 'rejected') throw status.reason;
  let headFiles = new Map<string, string>();
  if (commit !== null) {
    if (tree.status === 'rejected') throw tree.reason;
    headFiles = parseLsTree(tree.value);
  }

  const files = new Map(headFiles);
  const changed = new Set<string>();
  const reported = parseStatusPaths(status.value);
  for (let i = 0; i < reported.length; i += HASH_BATCH) {
    await Promise.all(
      reported.slice(i, i + HASH_BATCH).map(async (repoPath) => {
        const id = await workingTreeId(path.join(toplevel, repoPath), format);
        if (id === null) files.delete(repoPath);
        else files.set(repoPath, id);
        // A path git lists can still equal HEAD (an edit staged, then undone in the tree).
        if (id !== (headFiles.get(repoPath) ?? null)) changed.add(repoPath);
      }),
    );
  }
  return { repoRoot: toplevel, commit, objectFormat: format, files, changed };
}

function parseLsTree(output: string): Map<string, string> {
  const files = new Map<string, string>();
  // Each record is "<mode> <type> <id>\t<path>"; -z keeps paths unquoted.
  for (const record of output.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const repoPath = record.slice(tab + 1);
    if (isNeverCode(repoPath)) continue;
    files.set(repoPath, record.slice(record.lastIndexOf(' ', tab) + 1, tab));
  }
  return files;
}

/**
 * The distinct paths of `status --porcelain=v1 -z --no-renames` records ("XY path"),
 * skipping the `--branch` header.
 * The status letters are not needed: what is on disk now decides the id.
 */
function parseStatusPaths(output: string): string[] {
  const paths = new Set<string>();
  for (const record of output.split('\0')) {
    if (record.length < 4 || record.startsWith('## ')) continue;
    // An untracked nested repository is listed as "dir/"; `git add` would record a gitlink.
    const repoPath = record.slice(3).replace(/\/$/, '');
    if (!isNeverCode(repoPath)) paths.add(repoPath);
  }
  return [...paths];
}

/** The id `git add` would record for a path now, or null when there is nothing to record. */
async function workingTreeId(absPath: string, format: GitObjectFormat): Promise<string | null> {
  const stats = await lstat(absPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
    throw error;
  });
  if (stats === null) return null;
  if (!stats.isDirectory()) return gitBlobIdOfFile(absPath, format);
  // A directory is only an entry of its own when it is a nested repository (a submodule):
  // its id is the commit it has checked out. Any other directory's files are listed one by one.
  const isRepository = await access(path.join(absPath, '.git')).then(
    () => true,
    () => false,
  );
  if (!isRepository) return null;
  const nestedHead = await simpleGit({ baseDir: absPath }).raw(['rev-parse', '--verify', '-q', 'HEAD']);
  return nestedHead.trim() || null;
}

function gitIn(dir: string): SimpleGit {
  try {
    return simpleGit({ baseDir: dir });
  } catch (error) {
    // simple-git refuses a missing directory with a message that does not name it.
    throw new Error(`${dir} does not exist or is not a directory; expected the repository to run in`, {
      cause: error,
    });
  }
}

function notARepository(dir: string, reason: unknown): unknown {
  const message = reason instanceof GitError ? reason.message : '';
  // "must be run in a work tree": a bare repository or the inside of .git.
  if (/not a git repository|must be run in a work tree/i.test(message)) {
    return new NotAGitRepositoryError(dir, { cause: reason });
  }
  return reason;
}

import { existsSync } from 'node:fs';
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
 * Reads which blob every file of the repository containing `dir` would have if the
 * working tree were committed now. Unchanged files' ids come from git's index; only the paths
 * `git status` reports as modified, added, untracked (not ignored) or deleted are then
 * read and hashed in-process, so an unchanged file is never opened. Bytecode and
 * `.fluksio/` are left out; submodules stay in, as their commit id. Throws
 * NotAGitRepositoryError outside a git work tree.
 */
export async function readCodeIndex(dir: string): Promise<CodeIndex> {
  // status and ls-tree name paths from the top of the work tree, which holds `.git`; from
  // anywhere else, ask git where the top is (one process more).
  const repoRoot = existsSync(path.join(dir, '.git')) ? dir : await topLevelOf(dir);
  const git = gitIn(repoRoot);
  // Two processes at once: on small trees their start-up, not their work, dominates.
  // The index holds the blob id of every tracked file; for a file status does not
  // report, that id is the one in HEAD's tree (a staged difference would be reported),
  // and reading it is cheaper than walking the tree. `--branch` puts HEAD's commit in
  // status's header, and each changed entry carries its id in HEAD.
  const [listed, status] = await Promise.allSettled([
    git.raw(['ls-files', '--stage', '-z']),
    git.raw(['status', '--porcelain=v2', '-z', '--branch', '--untracked-files=all', '--no-renames']),
  ]);
  if (status.status === 'rejected') throw notARepository(repoRoot, status.reason);
  if (listed.status === 'rejected') throw listed.reason;
  const { commit, entries } = parseStatus(status.value);
  const format: GitObjectFormat =
    commit === null ? await objectFormatOf(git) : commit.length === 64 ? 'sha256' : 'sha1';

  const files = parseLsFiles(listed.value);
  const changed = new Set<string>();
  for (let i = 0; i < entries.length; i += HASH_BATCH) {
    await Promise.all(
      entries.slice(i, i + HASH_BATCH).map(async ({ path: repoPath, headId }) => {
        const id = await workingTreeId(path.join(repoRoot, repoPath), format);
        if (id === null) files.delete(repoPath);
        else files.set(repoPath, id);
        // A path git lists can still equal HEAD (an edit staged, then undone in the tree).
        if (id !== headId) changed.add(repoPath);
      }),
    );
  }
  return { repoRoot, commit, objectFormat: format, files, changed };
}

async function topLevelOf(dir: string): Promise<string> {
  try {
    return (await gitIn(dir).raw(['rev-parse', '--show-toplevel'])).trim();
  } catch (error) {
    throw notARepository(dir, error);
  }
}

/** The object format of a repository without commits, where no id shows it. */
async function objectFormatOf(git: SimpleGit): Promise<GitObjectFormat> {
  const format = (await git.raw(['rev-parse', '--show-object-format'])).trim();
  if (format !== 'sha1' && format !== 'sha256')
    throw new Error(`git reported an unknown object format "${format}"`);
  return format;
}

/** `ls-files --stage -z` records, "<mode> <id> <stage>\t<path>", as path → id. */
function parseLsFiles(output: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const record of output.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const repoPath = record.slice(tab + 1);
    if (isNeverCode(repoPath)) continue;
    const [, id = '', stage = '0'] = record.slice(0, tab).split(' ');
    // A conflicted path has stages 1–3 here; status reports it, and the tree's bytes decide.
    if (stage === '0') files.set(repoPath, id);
  }
  return files;
}

/** A path status reports, with its blob id in HEAD (null when HEAD does not have it). */
interface StatusEntry {
  path: string;
  headId: string | null;
}

/**
 * HEAD's commit (null while unborn) and the paths of a
 * `status --porcelain=v2 -z --branch --no-renames` listing. Changed entries are
 * "1 XY sub mH mI mW hH hI path" (hH: the id in HEAD), unmerged ones
 * "u XY sub m1 m2 m3 mW h1 h2 h3 path", untracked ones "? path". The status letters are
 * not needed: what is on disk now decides the id.
 */
function parseStatus(output: string): { commit: string | null; entries: StatusEntry[] } {
  let commit: string | null = null;
  const entries = new Map<string, StatusEntry>();
  for (const record of output.split('\0')) {
    if (record.startsWith('# branch.oid ')) {
      const oid = record.slice('# branch.oid '.length);
      commit = oid === '(initial)' ? null : oid;
      continue;
    }
    const fields = record[0] === '1' ? 8 : record[0] === 'u' ? 10 : record[0] === '?' ? 1 : -1;
    if (fields < 0 || record[1] !== ' ') continue;
    const parts = record.split(' ');
    // An untracked nested repository is listed as "dir/"; `git add` would record a gitlink.
    const repoPath = parts.slice(fields).join(' ').replace(/\/$/, '');
    if (!repoPath || isNeverCode(repoPath)) continue;
    const headId = record[0] === '1' ? (parts[6] ?? '') : '';
    entries.set(repoPath, { path: repoPath, headId: /^0+$/.test(headId) || headId === '' ? null : headId });
  }
  return { commit, entries: [...entries.values()] };
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

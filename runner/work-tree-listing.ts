import { execFile } from 'node:child_process';
import type { GitObjectFormat } from './git-blob-id.js';
import { isNeverCode } from './never-code.js';

/** What git says about a work tree; the working-tree bytes are read elsewhere. */
export interface WorkTreeListing {
  /** HEAD's commit; null while HEAD is unborn. */
  commit: string | null;
  objectFormat: GitObjectFormat;
  /**
   * Each path git lists, repository-relative posix → the index's `<mode> <id>` (stage 0);
   * null for an untracked, not ignored path (a nested repository is one path) or a
   * conflicted one. Never-code paths are left out.
   */
  paths: Map<string, string | null>;
  /** Tracked paths in conflict: the index holds stages 1–3 for them. */
  unmerged: Set<string>;
  /** Tracked paths left out of the working tree on purpose (sparse checkout). */
  skipWorktree: Set<string>;
  /** Paths whose entry in HEAD is not the index's: HEAD's `<mode> <id>`, or null where HEAD has none. */
  headDiffers: Map<string, string | null>;
}

/**
 * Lists a work tree with git, without trusting git's stat cache for anything: the
 * tracked paths with their index entries and the untracked, not-ignored ones
 * (`ls-files`), HEAD's commit, and where HEAD differs from the index (`diff-index
 * --cached`, which reads no working-tree file). `.fluksio/`, `__pycache__/` and `*.pyc`
 * are not even walked. `root` must be the top of the work tree.
 */
export async function listWorkTree(root: string): Promise<WorkTreeListing> {
  const head = async () => {
    // `--verify -q` prints nothing for an unborn HEAD and exits 1 without an error message.
    const [format = '', commit = ''] = (
      await git(root, ['rev-parse', '--show-object-format', '--verify', '-q', 'HEAD'], [1])
    ).split('\n');
    if (format !== 'sha1' && format !== 'sha256') {
      throw new Error(`git reported an unknown object format "${format}" in ${root}`);
    }
    const differs = commit
      ? parseDiffIndex(await git(root, ['diff-index', '--cached', '-z', '--no-renames', commit]))
      : new Map<string, string | null>();
    return { commit: commit || null, objectFormat: format as GitObjectFormat, headDiffers: differs };
  };
  const [listed, fromHead] = await Promise.all([
    git(root, [
      'ls-files',
      '-z',
      '--stage',
      '-t',
      '--cached',
      '--others',
      '--exclude-standard',
      '--exclude=.fluksio',
      '--exclude=__pycache__',
      '--exclude=*.pyc',
    ]),
    head(),
  ]);
  return { ...fromHead, ...parseLsFiles(listed) };
}

/**
 * Runs git in `root` and resolves with its output. node's own execFile, not simple-git:
 * a code index runs git on every `fluksio run`, and simple-git's task queue and plugins
 * cost ~5 ms of the ~30 ms the whole 5,000-file index may take. `quietExits` are exit
 * codes that are answers rather than failures when git printed no error.
 */
function git(root: string, args: string[], quietExits: number[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd: root, maxBuffer: Infinity, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error === null || (quietExits.includes(Number(error.code)) && stderr === '')) resolve(stdout);
      else
        reject(
          new Error(`git ${args[0]} failed in ${root}: ${stderr.trim() || error.message}`, { cause: error }),
        );
    });
  });
}

type Listed = Pick<WorkTreeListing, 'paths' | 'unmerged' | 'skipWorktree'>;

/**
 * `ls-files -z --stage -t` records: `? path` for an untracked path (`dir/` for a nested
 * repository), `<tag> <mode> <id> <stage>\t<path>` for a tracked one, where the tag S
 * marks skip-worktree. The tag is what tells the two apart, whatever a file is named.
 * Read with indexOf rather than split: this runs over every file of the repository.
 */
function parseLsFiles(output: string): Listed {
  const listed: Listed = { paths: new Map(), unmerged: new Set(), skipWorktree: new Set() };
  for (
    let start = 0, end = output.indexOf('\0');
    end >= 0;
    start = end + 1, end = output.indexOf('\0', start)
  ) {
    if (end - start < 3 || output.charCodeAt(start + 1) !== 0x20) continue;
    if (output.charCodeAt(start) === 0x3f /* ? */) {
      const repoPath = output.slice(start + 2, output.charCodeAt(end - 1) === 0x2f /* / */ ? end - 1 : end);
      if (!isNeverCode(repoPath)) listed.paths.set(repoPath, null);
      continue;
    }
    const tab = output.indexOf('\t', start);
    if (tab < 0 || tab > end) continue;
    const repoPath = output.slice(tab + 1, end);
    if (isNeverCode(repoPath)) continue;
    // `<mode> <id> <stage>`: the stage is the one digit before the tab.
    if (output.charCodeAt(tab - 1) !== 0x30 /* 0 */) {
      listed.paths.set(repoPath, null);
      listed.unmerged.add(repoPath);
    } else if (!listed.paths.has(repoPath)) {
      listed.paths.set(repoPath, output.slice(start + 2, tab - 2));
      if (output.charCodeAt(start) === 0x53 /* S */) listed.skipWorktree.add(repoPath);
    }
  }
  return listed;
}

/** `diff-index -z` records, `:<head mode> <index mode> <head id> <index id> <status>\0<path>`. */
function parseDiffIndex(output: string): Map<string, string | null> {
  const differs = new Map<string, string | null>();
  const fields = output.split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [headMode = '', , headId = ''] = (fields[i] as string).slice(1).split(' ');
    const repoPath = fields[i + 1] as string;
    if (isNeverCode(repoPath)) continue;
    differs.set(repoPath, /^0+$/.test(headMode) ? null : `${headMode} ${headId}`);
  }
  return differs;
}

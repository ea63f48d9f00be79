import { simpleGit } from 'simple-git';
import type { GitObjectFormat } from './git-blob-id.js';
import { isNeverCode } from './never-code.js';

/** A path git lists in a work tree: tracked (in the index) or untracked and not ignored. */
export interface ListedPath {
  /** The index's `<mode> <id>` (stage 0); null for an untracked path or a conflicted one. */
  indexed: string | null;
  /** Tracked and conflicted: the index holds stages 1–3 for it. */
  unmerged: boolean;
  /** Tracked but left out of the working tree on purpose (sparse checkout). */
  skipWorktree: boolean;
}

/** What git says about a work tree; the working-tree bytes are read elsewhere. */
export interface WorkTreeListing {
  /** HEAD's commit; null while HEAD is unborn. */
  commit: string | null;
  objectFormat: GitObjectFormat;
  /** Repository-relative posix path → what the index says of it. Never-code paths are left out. */
  paths: Map<string, ListedPath>;
  /** Paths whose entry in HEAD is not the index's: HEAD's `<mode> <id>`, or null where HEAD has none. */
  headDiffers: Map<string, string | null>;
}

/**
 * Lists a work tree with git, without trusting git's stat cache for anything: the
 * tracked paths with their index entries and the untracked, not-ignored ones
 * (`ls-files`; an untracked nested repository is one path), HEAD's commit, and where
 * HEAD differs from the index (`diff-index --cached`, which reads no working-tree file).
 * `.fluksio/`, `__pycache__/` and `*.pyc` are not even walked. `root` must be the top
 * of the work tree.
 */
export async function listWorkTree(root: string): Promise<WorkTreeListing> {
  const git = simpleGit({ baseDir: root });
  const head = async () => {
    // `--verify -q` prints nothing for an unborn HEAD and exits 1 without an error message.
    const [format = '', commit = ''] = (
      await git.raw(['rev-parse', '--show-object-format', '--verify', '-q', 'HEAD'])
    ).split('\n');
    if (format !== 'sha1' && format !== 'sha256') {
      throw new Error(`git reported an unknown object format "${format}" in ${root}`);
    }
    const differs = commit
      ? parseDiffIndex(await git.raw(['diff-index', '--cached', '-z', '--no-renames', commit]))
      : new Map<string, string | null>();
    return { commit: commit || null, objectFormat: format as GitObjectFormat, headDiffers: differs };
  };
  const [listed, fromHead] = await Promise.all([
    git.raw([
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
  return { ...fromHead, paths: parseLsFiles(listed) };
}

/**
 * `ls-files -z --stage -t` records: `? path` for an untracked path (`dir/` for a nested
 * repository), `<tag> <mode> <id> <stage>\t<path>` for a tracked one, where the tag S
 * marks skip-worktree. The tag is what tells the two apart, whatever a file is named.
 */
function parseLsFiles(output: string): Map<string, ListedPath> {
  const paths = new Map<string, ListedPath>();
  for (const record of output.split('\0')) {
    if (record.length < 3 || record[1] !== ' ') continue;
    if (record[0] === '?') {
      const repoPath = record.slice(2).replace(/\/$/, '');
      if (!isNeverCode(repoPath))
        paths.set(repoPath, { indexed: null, unmerged: false, skipWorktree: false });
      continue;
    }
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const repoPath = record.slice(tab + 1);
    if (isNeverCode(repoPath)) continue;
    const [mode = '', id = '', stage = '0'] = record.slice(2, tab).split(' ');
    const previous = paths.get(repoPath);
    if (stage !== '0') {
      paths.set(repoPath, { indexed: null, unmerged: true, skipWorktree: false });
    } else if (previous === undefined) {
      paths.set(repoPath, { indexed: `${mode} ${id}`, unmerged: false, skipWorktree: record[0] === 'S' });
    }
  }
  return paths;
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

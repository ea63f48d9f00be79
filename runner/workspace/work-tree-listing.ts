import { isUtf8 } from 'node:buffer';
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { GitObjectFormat } from './git-blob-id.js';
import { gitQuotedPath } from './git-quoted-path.js';
import { isNeverCode } from './never-code.js';
import type { RepositoryConfigGuard } from './repository-config-guard.js';

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
  /**
   * Listed paths whose names are not UTF-8, as `paths` holds them (each invalid byte read
   * as U+FFFD, so no file by that name exists) → the name as git quotes it
   * (`"conf\377.txt"`). Their files cannot be read back by these names.
   */
  notUtf8: Map<string, string>;
  /** What git read to answer, besides the work tree's files: see listing-snapshot.ts. */
  sources: ListingSources;
}

/** The files and directories behind a listing other than the listed files themselves. */
export interface ListingSources {
  /** The repository's git directory and common directory (they differ in a linked worktree), absolute. */
  gitDir: string;
  commonDir: string;
  /** The index file and `info/exclude`, absolute (`GIT_INDEX_FILE` honoured). */
  indexFile: string;
  excludeFile: string;
  /** Every config file git read (includes too), absolute; command-line config is not a file. */
  configFiles: string[];
  /** `core.excludesFile` as configured, or null when it is not set. */
  excludesFile: string | null;
  /**
   * Whether the config includes other files (`include.path`, `includeIf.*.path`): one that
   * does not exist yet is read by git once it does, and no guard watches it.
   */
  configIncludes?: boolean;
  /** Directories git did not walk because they are ignored, repository-relative posix, no trailing `/`. */
  ignoredDirs: string[];
}

/**
 * Lists a work tree with git, without trusting git's stat cache for anything: the
 * tracked paths with their index entries and the untracked, not-ignored ones
 * (`ls-files`), HEAD's commit, and where HEAD differs from the index (`diff-index
 * --cached`, which reads no working-tree file). `.fluksio/`, `__pycache__/` and `*.pyc`
 * are not even walked. `root` must be the top of the work tree. With a `guard`, git runs
 * nothing the repository's config names (repository-config-guard.ts).
 */
export async function listWorkTree(
  root: string,
  guard: RepositoryConfigGuard | null = null,
): Promise<WorkTreeListing> {
  const { listed, listedBytes, head, ignored, config } = await runListing(root, guard);
  const headerEnd = head.indexOf('\n\n');
  const [format = '', gitDir = '', commonDir = '', indexFile = '', excludeFile = '', commit = ''] = head
    .slice(0, Math.max(headerEnd, 0))
    .split('\n');
  if (format !== 'sha1' && format !== 'sha256') {
    throw new Error(`git reported an unknown object format "${format}" in ${root}`);
  }
  return {
    commit: commit || null,
    objectFormat: format,
    headDiffers: commit ? parseDiffIndex(head.slice(headerEnd + 2)) : new Map(),
    ...parseLsFiles(listed),
    notUtf8: isUtf8(listedBytes) ? new Map() : namesNotUtf8(listedBytes),
    sources: {
      gitDir,
      commonDir: path.resolve(root, commonDir),
      indexFile: path.resolve(root, indexFile),
      excludeFile: path.resolve(root, excludeFile),
      ...parseConfigOrigins(root, config),
      ignoredDirs: ignored
        .split('\0')
        .filter((entry) => entry.endsWith('/'))
        .map((entry) => entry.slice(0, -1)),
    },
  };
}

/**
 * The git commands of a listing, run by one shell: node forks itself for every process
 * it starts, which costs a read more than the commands themselves. The listing goes to
 * stdout while, at once, fd 3 gets the object format, the git and common directories,
 * the index and `info/exclude` paths and HEAD's commit on a line each (no commit while
 * HEAD is unborn: `--verify -q` then prints nothing and exits 1, quietly), a blank line,
 * and then `diff-index` of that very commit against the index; fd 4 gets the ignored
 * directories git does not walk (`--directory` also names a directory holding only
 * ignored files, which git does walk: `check-ignore` keeps those a rule excludes
 * themselves), fd 5 the config with the file each entry came from.
 * The shell exits with the listing's failure, else with rev-parse's; the last two only
 * feed listing-snapshot.ts, which does without them. Its arguments go before every git
 * subcommand (a guard's command-line config).
 */
const LISTING_SCRIPT = `git "$@" ls-files -z --stage -t --cached --others --exclude-standard \\
  --exclude=.fluksio --exclude=__pycache__ --exclude='*.pyc' &
listed=$!
git "$@" ls-files -z --others --ignored --directory --exclude-standard 2>/dev/null |
  git "$@" check-ignore --stdin -z >&4 2>/dev/null &
git "$@" config --list --show-origin -z >&5 2>/dev/null &
head=$(git "$@" rev-parse --show-object-format --absolute-git-dir --git-common-dir \\
  --git-path index --git-path info/exclude --verify -q HEAD)
code=$?
printf '%s\\n\\n' "$head" >&3
if [ $code -eq 0 ]; then git "$@" diff-index --cached -z --no-renames "\${head##*
}" >&3 || code=$?; fi
wait $listed || exit $?
wait
exit $code`;

/** Runs LISTING_SCRIPT in `root`: the listing's output and that of fds 3, 4 and 5. */
function runListing(
  root: string,
  guard: RepositoryConfigGuard | null,
): Promise<{ listed: string; listedBytes: Buffer; head: string; ignored: string; config: string }> {
  return new Promise((resolve, reject) => {
    // By its POSIX path: a runner's PATH may name git alone (git itself is found on PATH).
    const child = spawn('/bin/sh', ['-c', LISTING_SCRIPT, 'sh', ...(guard?.args ?? [])], {
      cwd: root,
      ...(guard ? { env: guard.environment(process.env) } : {}),
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
    // stdout, stderr, then fds 3 to 5.
    const streams = (child.stdio as unknown as Readable[]).slice(1);
    const outputs = streams.map((stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      return chunks;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const [listedBytes, ...others] = outputs.map((chunks) => Buffer.concat(chunks)) as [
        Buffer,
        ...Buffer[],
      ];
      const listed = listedBytes.toString('utf8');
      const [stderr = '', head = '', ignored = '', config = ''] = others.map((each) => each.toString('utf8'));
      // Exit 1 without a word is rev-parse's answer for an unborn HEAD.
      if (code === 0 || (code === 1 && stderr === ''))
        resolve({ listed, listedBytes, head, ignored, config });
      else reject(new Error(`git failed in ${root}: ${stderr.trim() || `exit code ${code}`}`));
    });
  });
}

/**
 * `config --list --show-origin -z` records, `<origin>\0<key>\n<value>\0`: the files
 * (`file:<path>`, relative to `root` when relative) and `core.excludesFile`.
 */
function parseConfigOrigins(
  root: string,
  output: string,
): Pick<ListingSources, 'configFiles' | 'excludesFile' | 'configIncludes'> {
  const configFiles = new Set<string>();
  let excludesFile: string | null = null;
  let configIncludes = false;
  const fields = output.split('\0');
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const origin = fields[i] as string;
    if (origin.startsWith('file:')) configFiles.add(path.resolve(root, origin.slice('file:'.length)));
    const entry = fields[i + 1] as string;
    const newline = entry.indexOf('\n');
    const key = newline >= 0 ? entry.slice(0, newline) : entry;
    if (key === 'core.excludesfile') excludesFile = entry.slice(newline + 1);
    if (key === 'include.path' || (key.startsWith('includeif.') && key.endsWith('.path')))
      configIncludes = true;
  }
  return { configFiles: [...configFiles], excludesFile, configIncludes };
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

/**
 * The `ls-files` records (as parseLsFiles reads them) whose path is not UTF-8: its name as
 * parseLsFiles decodes it → as git quotes it. A record's fields before its path are ASCII,
 * so only the path can be at fault, and it decodes alike alone or within the listing.
 */
function namesNotUtf8(listed: Buffer): Map<string, string> {
  const names = new Map<string, string>();
  for (let start = 0, end = listed.indexOf(0); end >= 0; start = end + 1, end = listed.indexOf(0, start)) {
    const record = listed.subarray(start, end);
    if (isUtf8(record)) continue;
    // `? path` (`dir/` for a nested repository) or `<tag> <mode> <id> <stage>\tpath`.
    let name = record[0] === 0x3f /* ? */ ? record.subarray(2) : record.subarray(record.indexOf(0x09) + 1);
    if (name.at(-1) === 0x2f /* / */) name = name.subarray(0, -1);
    names.set(name.toString('utf8'), gitQuotedPath(name));
  }
  return names;
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

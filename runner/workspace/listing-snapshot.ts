import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { isNeverCode } from './never-code.js';
import type { WorkTreeListing } from './work-tree-listing.js';

/**
 * A path whose lstat vouches for a listing, absolute: with its inode, size, mtimeMs and
 * ctimeMs, or alone when it did not exist.
 */
type Guard = [string, number, number, number, number] | [string];

/**
 * What git answered for a work tree (work-tree-listing.ts), with every path whose change
 * could change that answer: while none has, the answer stands and git need not run
 * again. git answers from its index, HEAD and the ref it names, its config and ignore
 * files, and the directories it walks for untracked files — a file created, removed or
 * renamed in a directory changes that directory's mtime, which is how git's own
 * untracked cache knows. The listed files' bytes are not in it: they are read (or found
 * in the stat cache) on every read of the code index, snapshot or not.
 */
export interface ListingSnapshot {
  listing: WorkTreeListing;
  guards: Guard[];
  /** The variables git ran with that change what it reads (`environmentKey`). */
  environment: string;
}

const GuardSchema = z.union([
  z.tuple([z.string(), z.number(), z.number(), z.number(), z.number()]),
  z.tuple([z.string()]),
]);

const HeaderSchema = z.object({
  layout: z.literal('fluksio-listing 2'),
  environment: z.string(),
  guards: z.array(GuardSchema),
  commit: z.string().nullable(),
  objectFormat: z.enum(['sha1', 'sha256']),
  unmerged: z.array(z.string()),
  skipWorktree: z.array(z.string()),
  headDiffers: z.array(z.tuple([z.string(), z.string().nullable()])),
  notUtf8: z.array(z.tuple([z.string(), z.string()])),
  sources: z.object({
    gitDir: z.string(),
    commonDir: z.string(),
    indexFile: z.string(),
    excludeFile: z.string(),
    configFiles: z.array(z.string()),
    excludesFile: z.string().nullable(),
    ignoredDirs: z.array(z.string()),
  }),
  /** How many `path\0entry\0` pairs follow the header's line. */
  count: z.number().int().nonnegative(),
});

/**
 * The variables that change which files git reads or how (`GIT_DIR`, `GIT_INDEX_FILE`,
 * `GIT_CONFIG_*`, `HOME`, `XDG_CONFIG_HOME`), as one string: a snapshot taken under
 * others does not hold.
 */
export function environmentKey(environment: Readonly<Record<string, string | undefined>>): string {
  const names = Object.keys(environment)
    .filter((name) => name.startsWith('GIT_') || name === 'HOME' || name === 'XDG_CONFIG_HOME')
    .sort();
  return JSON.stringify(names.map((name) => [name, environment[name]]));
}

/**
 * The guards of a listing just made in `root`, or null when it cannot be vouched for: a
 * guard changed within `racyWindowMs` of the listing's start (a change in the same
 * clock tick as git's read would keep its stat), a HEAD that is neither a branch nor a
 * commit, or a directory that cannot be read.
 */
export function listingGuards(options: {
  root: string;
  listing: WorkTreeListing;
  environment: Readonly<Record<string, string | undefined>>;
  scanStartedMs: number;
  racyWindowMs: number;
}): Guard[] | null {
  const { root, listing, environment } = options;
  const { sources } = listing;
  // An included config file may not exist yet; git reads it once it does.
  if (sources.configIncludes === true) return null;
  const home = environment.HOME ?? '';
  const xdg = environment.XDG_CONFIG_HOME || path.join(home, '.config');
  const head = readOrNull(path.join(sources.gitDir, 'HEAD'));
  const branch = /^ref: (refs\/heads\/[^\n]+)\n?$/.exec(head ?? '')?.[1];
  if (branch === undefined && !/^[0-9a-f]{40}(?:[0-9a-f]{24})?\n?$/.test(head ?? '')) return null;
  const excludesFile = sources.excludesFile?.replace(/^~\//, `${home}/`) ?? path.join(xdg, 'git', 'ignore');
  const files = [
    path.join(sources.gitDir, 'HEAD'),
    ...(branch === undefined ? [] : [path.join(sources.commonDir, branch)]),
    path.join(sources.commonDir, 'packed-refs'),
    path.join(sources.commonDir, 'reftable'),
    sources.indexFile,
    sources.excludeFile,
    path.resolve(root, excludesFile),
    ...sources.configFiles,
    // Config files that may not exist yet, where git would look for them.
    environment.GIT_CONFIG_SYSTEM ?? '/etc/gitconfig',
    ...(environment.GIT_CONFIG_GLOBAL !== undefined
      ? [environment.GIT_CONFIG_GLOBAL]
      : [path.join(home, '.gitconfig'), path.join(xdg, 'git', 'config')]),
    path.join(sources.commonDir, 'config'),
    path.join(sources.gitDir, 'config.worktree'),
  ];
  const guards = [...new Set(files)].map(guardOf);
  const walked = walkedDirectories(root, new Set(sources.ignoredDirs), guards);
  if (walked === null) return null;
  const oldest = options.scanStartedMs - options.racyWindowMs;
  return guards.every((guard) => guard.length === 1 || Math.max(guard[3], guard[4]) < oldest) ? guards : null;
}

/**
 * Adds to `guards` each directory git walks for untracked files (all but `.git`, the
 * ignored ones and the never-code ones, which the listing excludes) and each
 * `.gitignore` in them, even one that ignores itself. Null when a directory cannot be read.
 */
function walkedDirectories(root: string, ignoredDirs: Set<string>, guards: Guard[]): Guard[] | null {
  const pending = [''];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    const absDir = dir === '' ? root : `${root}/${dir}`;
    guards.push(guardOf(absDir));
    let entries;
    try {
      entries = readdirSync(absDir, { withFileTypes: true });
    } catch {
      return null;
    }
    for (const entry of entries) {
      const repoPath = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== '.git' && !ignoredDirs.has(repoPath) && !isNeverCode(repoPath)) {
          pending.push(repoPath);
        }
      } else if (entry.name === '.gitignore') {
        guards.push(guardOf(`${root}/${repoPath}`));
      }
    }
  }
  return guards;
}

/** Whether every guard of `snapshot` still has the stat it had, under the same environment. */
export function listingSnapshotHolds(
  snapshot: ListingSnapshot,
  environment: Readonly<Record<string, string | undefined>>,
): boolean {
  if (snapshot.environment !== environmentKey(environment)) return false;
  for (const guard of snapshot.guards) {
    const now = guardOf(guard[0]);
    if (now.length !== guard.length) return false;
    if (
      now.length === 5 &&
      (now[1] !== guard[1] || now[2] !== guard[2] || now[3] !== guard[3] || now[4] !== guard[4])
    ) {
      return false;
    }
  }
  return true;
}

/**
 * A path's stat, following symlinks: a config or ignore file kept elsewhere (dotfiles) is
 * read by git through its link, so its target's changes count; replacing a link changes its
 * directory's mtime, which is guarded too.
 */
function guardOf(absPath: string): Guard {
  let stats;
  try {
    stats = statSync(absPath, { throwIfNoEntry: false });
  } catch {
    // ENOTDIR: a component is a file now, so the path is not there.
    stats = undefined;
  }
  return stats === undefined ? [absPath] : [absPath, stats.ino, stats.size, stats.mtimeMs, stats.ctimeMs];
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Reads a snapshot file: a line of JSON (the header), then each listed path and its
 * index entry (empty for an untracked path), each ended by a NUL. Null when there is
 * none or it is damaged: git is then asked, as without one.
 */
export function loadListingSnapshot(file: string): ListingSnapshot | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  const headerEnd = text.indexOf('\n');
  let header;
  try {
    header = HeaderSchema.safeParse(JSON.parse(text.slice(0, headerEnd)));
  } catch {
    return null;
  }
  if (headerEnd < 0 || !header.success) return null;
  const { environment, guards, count, unmerged, skipWorktree, headDiffers, notUtf8, ...rest } = header.data;
  const fields = text.slice(headerEnd + 1).split('\0');
  if (fields.length !== 2 * count + 1) return null;
  const paths = new Map<string, string | null>();
  for (let i = 0; i < count; i += 1)
    paths.set(fields[2 * i] as string, (fields[2 * i + 1] as string) || null);
  return {
    environment,
    guards,
    listing: {
      ...rest,
      paths,
      unmerged: new Set(unmerged),
      skipWorktree: new Set(skipWorktree),
      headDiffers: new Map(headDiffers),
      notUtf8: new Map(notUtf8),
    },
  };
}

/**
 * Writes a snapshot atomically (a temporary file renamed into place). A snapshot that
 * cannot be written only makes the next read ask git, so a failure is not an error.
 */
export async function saveListingSnapshot(file: string, snapshot: ListingSnapshot): Promise<void> {
  const { listing } = snapshot;
  const header: z.input<typeof HeaderSchema> = {
    layout: 'fluksio-listing 2',
    environment: snapshot.environment,
    guards: snapshot.guards,
    commit: listing.commit,
    objectFormat: listing.objectFormat,
    unmerged: [...listing.unmerged],
    skipWorktree: [...listing.skipWorktree],
    headDiffers: [...listing.headDiffers],
    notUtf8: [...listing.notUtf8],
    sources: listing.sources,
    count: listing.paths.size,
  };
  let body = '';
  for (const [repoPath, entry] of listing.paths) body += `${repoPath}\0${entry ?? ''}\0`;
  const temp = `${file}.${randomUUID()}.tmp`;
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(temp, `${JSON.stringify(header)}\n${body}`);
    await rename(temp, file);
  } catch {
    await rm(temp, { force: true }).catch(() => {});
  }
}

/** Where the listing snapshot kept beside a stat cache file lives: the two go together. */
export function listingSnapshotFile(statCacheFile: string): string {
  return `${statCacheFile}-listing`;
}

/** Removes a snapshot that no longer holds, so that later reads do not load it for nothing. */
export async function dropListingSnapshot(file: string): Promise<void> {
  await rm(file, { force: true }).catch(() => {});
}

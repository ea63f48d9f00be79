import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { reservedComponentOf } from '../../schemas/reserved-path.js';
import { UnsafePathError } from './unsafe-path-error.js';

export interface ResolveWorkspacePathOptions {
  /**
   * Accept a last component that is a symlink, wherever it points: for removing the
   * link itself, which never touches its target.
   * @defaultValue false
   */
  allowFinalSymlink?: boolean;
  /**
   * The path is an out's, which `fluksio pull` later writes on someone's machine: no
   * component may be a symlink, even one that stays inside (a committed `g -> .git`
   * would make `g/config` git's config), except a last one with `allowFinalSymlink`; and
   * no component may name `.git` or `.fluksio` in any case.
   * @defaultValue false
   */
  out?: boolean;
}

/** Symlinks followed while resolving one dangling link chain, as the kernel's own limit. */
const MAX_LINK_HOPS = 40;

/**
 * The absolute path of `relPath` inside the workspace `root`, after checking that it is
 * safe to read or write (DESIGN §5): relative, not climbing out with `..`, not the root
 * itself, and every component that exists, lstat-ed one by one from the root, is either
 * not a symlink or a symlink whose resolved target stays inside the root. Throws
 * UnsafePathError otherwise. Components that do not exist yet are fine: creating them
 * makes plain directories. The check cannot stop a process that swaps in a symlink
 * afterwards, so it is made right before each read or write, never ahead of time.
 */
export async function resolveWorkspacePath(
  root: string,
  relPath: string,
  options: ResolveWorkspacePathOptions = {},
): Promise<string> {
  const normalized = normalizeRelative(relPath);
  const reserved = options.out ? reservedComponentOf(normalized) : null;
  if (reserved !== null) {
    throw new UnsafePathError(relPath, `"${relPath}" is inside ${reserved}/, where no output may be written`);
  }
  const realRoot = await realpath(root);
  const components = normalized.split('/');
  for (let i = 0; i < components.length; i++) {
    const prefix = components.slice(0, i + 1).join('/');
    const absPrefix = path.join(realRoot, prefix);
    const stats = await lstat(absPrefix).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      throw error;
    });
    // Nothing below a missing component (or below a file) can be a symlink today.
    if (stats === null) break;
    const isLast = i === components.length - 1;
    if (options.out && stats.isSymbolicLink() && !(isLast && options.allowFinalSymlink)) {
      throw new UnsafePathError(
        relPath,
        isLast
          ? `"${relPath}" is a symlink; an output must be a file or a directory`
          : `"${relPath}" goes through the symlink "${prefix}"; an output's path may not pass through symlinks`,
      );
    }
    if (stats.isSymbolicLink() && !(isLast && options.allowFinalSymlink)) {
      const target = await resolveLinkTarget(absPrefix, 0);
      if (!isInside(realRoot, target)) {
        throw new UnsafePathError(
          relPath,
          isLast
            ? `"${relPath}" is a symlink that points outside the workspace (${target})`
            : `"${relPath}" goes through the symlink "${prefix}", which points outside the workspace (${target})`,
        );
      }
    }
  }
  return path.join(path.resolve(root), normalized);
}

function normalizeRelative(relPath: string): string {
  if (relPath === '' || relPath.includes('\0')) {
    throw new UnsafePathError(
      relPath,
      `"${relPath}" is not a usable path; expected a relative path like "data/x"`,
    );
  }
  if (path.posix.isAbsolute(relPath) || path.isAbsolute(relPath)) {
    throw new UnsafePathError(relPath, `"${relPath}" is absolute; expected a path relative to the workspace`);
  }
  const normalized = path.posix.normalize(relPath).replace(/\/+$/, '');
  if (normalized === '..' || normalized.startsWith('../')) {
    throw new UnsafePathError(relPath, `"${relPath}" leads outside the workspace; expected a path inside it`);
  }
  if (normalized === '.' || normalized === '') {
    throw new UnsafePathError(relPath, `"${relPath}" is the workspace itself; expected a path inside it`);
  }
  return normalized;
}

/**
 * Where a symlink finally leads. realpath answers for links whose target exists; a
 * dangling link is followed by hand, because writing through it would create its target.
 */
async function resolveLinkTarget(absPath: string, hops: number): Promise<string> {
  try {
    return await realpath(absPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const parent = await resolveLinkTarget(path.dirname(absPath), hops);
  const here = path.join(parent, path.basename(absPath));
  const stats = await lstat(here).catch(() => null);
  if (!stats?.isSymbolicLink()) return here;
  if (hops >= MAX_LINK_HOPS) throw new Error(`${absPath}: too many levels of symbolic links`);
  return resolveLinkTarget(path.resolve(parent, await readlink(here)), hops + 1);
}

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  const climbsOut = relative === '..' || relative.startsWith(`..${path.sep}`);
  return !climbsOut && !path.isAbsolute(relative);
}

/** Folders an out may never be in: git's own, and the local store's. */
const RESERVED = ['.git', '.fluksio'];

/**
 * The first component of a `/`-separated path that names a reserved folder, or null.
 * Compared as a case-insensitive file system (macOS, Windows) would, and with the
 * trailing dots and spaces Windows drops, so `.GIT/config` or `.git./hooks` cannot
 * reach git's folder on a laptop where they mean `.git/config`. Any component counts:
 * a submodule's `.git` is as dangerous as the top one.
 */
export function reservedComponentOf(path: string): string | null {
  for (const component of path.split(/[/\\]/)) {
    const folded = component.toLowerCase().replace(/[. ]+$/, '');
    if (RESERVED.includes(folded)) return component;
  }
  return null;
}

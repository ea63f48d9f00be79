import { simpleGit } from 'simple-git';
import type { WorkTreeListing } from './work-tree-listing.js';

/** Paths given to one `git hash-object`, well under any command-line length limit. */
const CLEAN_BATCH = 500;

/**
 * The paths whose working-tree entry is not HEAD's. A regular file whose bytes hash
 * differently but whose mode is HEAD's may still be unchanged for git, when a clean
 * filter or line-ending conversion turns it into HEAD's blob: those few are hashed again
 * by `git hash-object`, which applies the repository's filters, as `git status` would.
 */
export async function changedPaths(
  root: string,
  listing: WorkTreeListing,
  files: Map<string, string>,
): Promise<Set<string>> {
  const headOf = (repoPath: string): string | null => {
    if (listing.commit === null) return null;
    if (listing.headDiffers.has(repoPath)) return listing.headDiffers.get(repoPath) ?? null;
    return listing.paths.get(repoPath)?.indexed ?? null;
  };
  const changed = new Set<string>();
  const filtered: { repoPath: string; head: string }[] = [];
  for (const repoPath of new Set([...files.keys(), ...listing.paths.keys(), ...listing.headDiffers.keys()])) {
    const working = files.get(repoPath) ?? null;
    const head = headOf(repoPath);
    if (working === head && !listing.paths.get(repoPath)?.unmerged) continue;
    const mode = working?.slice(0, 7);
    const sameBlobMode = mode === head?.slice(0, 7) && (mode === '100644 ' || mode === '100755 ');
    if (working !== null && head !== null && sameBlobMode) {
      filtered.push({ repoPath, head });
    } else {
      changed.add(repoPath);
    }
  }
  const git = simpleGit({ baseDir: root });
  for (let i = 0; i < filtered.length; i += CLEAN_BATCH) {
    const batch = filtered.slice(i, i + CLEAN_BATCH);
    const cleaned = (await git.raw(['hash-object', '--', ...batch.map(({ repoPath }) => repoPath)])).split(
      '\n',
    );
    batch.forEach(({ repoPath, head }, index) => {
      if (head.slice(7) !== cleaned[index]) changed.add(repoPath);
    });
  }
  return changed;
}

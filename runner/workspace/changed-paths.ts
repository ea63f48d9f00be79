import { checkedOutIds } from './checked-out-ids.js';
import { gitOutput } from './git-output.js';
import { withoutRepositoryConfig, type RepositoryConfigGuard } from './repository-config-guard.js';
import type { WorkTreeListing } from './work-tree-listing.js';

/** Paths given to one `git hash-object`, well under any command-line length limit. */
const CLEAN_BATCH = 500;

/**
 * The paths whose working-tree entry is not HEAD's: whose bytes differ from those a
 * checkout of HEAD writes. A regular file whose bytes hash differently but whose mode is
 * HEAD's may still be unchanged, when a clean filter or line-ending conversion turns it
 * into HEAD's blob: those few are hashed again by `git hash-object`, which applies the
 * repository's filters, as `git status` would. git stops there, but a lossy clean filter
 * (one that drops lines) also turns an edited file into HEAD's blob: so a file git calls
 * unchanged counts as unchanged only when its bytes are those a checkout of its blob
 * writes (`checkedOutIds`), which a lossless conversion (CRLF) gives back and a lossy
 * one does not. With a `guard`, git runs no filter of the repository's own config
 * (repository-config-guard.ts).
 */
export async function changedPaths(
  root: string,
  listing: WorkTreeListing,
  files: Map<string, string>,
  guard: RepositoryConfigGuard | null = null,
): Promise<Set<string>> {
  const changed = new Set<string>();
  const filtered: { repoPath: string; head: string }[] = [];
  const compare = (repoPath: string, head: string | null) => {
    const working = files.get(repoPath) ?? null;
    if (working === head && !listing.unmerged.has(repoPath)) return;
    const mode = working?.slice(0, 7);
    const sameBlobMode = mode === head?.slice(0, 7) && (mode === '100644 ' || mode === '100755 ');
    if (working !== null && head !== null && sameBlobMode) {
      filtered.push({ repoPath, head });
    } else {
      changed.add(repoPath);
    }
  };
  // Every path of `files` is listed; HEAD's entry is the index's unless diff-index said otherwise.
  for (const [repoPath, indexed] of listing.paths) {
    if (listing.commit === null) compare(repoPath, null);
    else if (!listing.headDiffers.has(repoPath)) compare(repoPath, indexed);
  }
  for (const [repoPath, head] of listing.headDiffers) compare(repoPath, head);
  if (filtered.length === 0) return changed;
  const compareFiltered = async (filterGuard: RepositoryConfigGuard | null) => {
    const converted: string[] = [];
    for (let i = 0; i < filtered.length; i += CLEAN_BATCH) {
      const batch = filtered.slice(i, i + CLEAN_BATCH);
      const cleaned = (
        await gitOutput(root, ['hash-object', '--', ...batch.map(({ repoPath }) => repoPath)], filterGuard)
      ).split('\n');
      batch.forEach(({ repoPath, head }, index) => {
        if (head.slice(7) !== cleaned[index]) changed.add(repoPath);
        // A checkout writes the index's entry; where that is not HEAD's (a staged
        // change), what a checkout of HEAD writes is not known here, so the path counts.
        else if (listing.headDiffers.has(repoPath)) changed.add(repoPath);
        else converted.push(repoPath);
      });
    }
    const checkedOut = await checkedOutIds(root, converted, listing.objectFormat, filterGuard);
    for (const repoPath of converted) {
      if (checkedOut.get(repoPath) !== files.get(repoPath)?.slice(7)) changed.add(repoPath);
    }
  };
  if (guard) await withoutRepositoryConfig(guard, root, listing, compareFiltered);
  else await compareFiltered(null);
  return changed;
}

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gitBlobIdOfFile, type GitObjectFormat } from './git-blob-id.js';
import { gitOutput } from './git-output.js';
import type { RepositoryConfigGuard } from './repository-config-guard.js';

/** Paths given to one `git checkout-index`, well under any command-line length limit. */
const CHECKOUT_BATCH = 500;

/**
 * The blob id of the bytes a fresh checkout would write for each of `repoPaths` from
 * the index (smudge filters and line-ending conversion applied), without touching the
 * work tree: `git checkout-index --prefix` writes them into a scratch directory, which is
 * then hashed and removed. `git cat-file --batch --filters` would spare the files, but
 * git before 2.41 refuses it for `<rev>:<path>` names ("missing path"). With a `guard`,
 * git runs as it says (repository-config-guard.ts).
 */
export async function checkedOutIds(
  root: string,
  repoPaths: readonly string[],
  format: GitObjectFormat,
  guard: RepositoryConfigGuard | null = null,
): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  if (repoPaths.length === 0) return ids;
  const scratch = await mkdtemp(path.join(tmpdir(), 'fluksio-checked-out-'));
  try {
    for (let i = 0; i < repoPaths.length; i += CHECKOUT_BATCH) {
      const batch = repoPaths.slice(i, i + CHECKOUT_BATCH);
      await gitOutput(root, ['checkout-index', '--force', `--prefix=${scratch}/`, '--', ...batch], guard);
      for (const repoPath of batch) {
        ids.set(repoPath, await gitBlobIdOfFile(path.join(scratch, repoPath), format));
      }
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return ids;
}

import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';

/** A temporary work tree of a repository at one commit, apart from the user's. */
export interface ScratchCheckout {
  /** Absolute real path of the scratch work tree. */
  root: string;
  /** Puts the work tree back to the commit exactly: tracked files reset, everything else removed. */
  reset(): Promise<void>;
  /** Removes the work tree and git's record of it. Idempotent. */
  remove(): Promise<void>;
  /**
   * The same, synchronously: for a process that is exiting at once (a second Ctrl-C),
   * where nothing asynchronous runs any more. Never throws.
   */
  removeNow(): void;
}

export interface ScratchCheckoutOptions {
  /** The folder the scratch work tree's temporary folder is made in. @defaultValue the system's temp dir */
  under?: string;
  /** How that temporary folder's name starts. @defaultValue `fluksio-verify-` */
  prefix?: string;
}

/**
 * Checks `commit` out into a new temporary work tree of the repository at `repoRoot`
 * (`git worktree add --detach`), so a stage can run there on exactly the committed
 * tree while the user's work tree stays untouched. A worktree shares the repository's
 * objects and configuration (filters, `core.autocrlf`), so its files are what a checkout
 * of the commit holds here; hooks are off, so checking out runs no code of the
 * repository's. Throws an error naming the commit when it cannot be checked out.
 */
export async function createScratchCheckout(
  repoRoot: string,
  commit: string,
  options: ScratchCheckoutOptions = {},
): Promise<ScratchCheckout> {
  const under = options.under ?? tmpdir();
  await mkdir(under, { recursive: true });
  const parent = await realpath(await mkdtemp(path.join(under, options.prefix ?? 'fluksio-verify-')));
  const root = path.join(parent, 'checkout');
  const git = gitIn(repoRoot);
  try {
    await git.raw(['worktree', 'add', '--detach', '--quiet', root, commit]);
  } catch (error) {
    await rm(parent, { recursive: true, force: true });
    throw new Error(
      `Could not check out commit ${commit} into a scratch work tree: ${(error as Error).message.trim()}`,
      { cause: error },
    );
  }
  const scratch = gitIn(root);
  let removed = false;
  return {
    root,
    async reset() {
      await scratch.raw(['reset', '--hard', '--quiet']);
      // -ff: also nested repositories a stage may have made; -x: ignored files too.
      await scratch.raw(['clean', '-ffdxq']);
    },
    async remove() {
      if (removed) return;
      removed = true;
      await rm(parent, { recursive: true, force: true });
      // The work tree is gone; prune drops git's record of it.
      await git.raw(['worktree', 'prune']).catch(() => {});
    },
    removeNow() {
      if (removed) return;
      removed = true;
      try {
        rmSync(parent, { recursive: true, force: true });
        execFileSync('git', ['-c', 'core.hooksPath=/dev/null', 'worktree', 'prune'], {
          cwd: repoRoot,
          stdio: 'ignore',
        });
      } catch {
        // Exiting: what is left is in the temporary directory, and `git worktree prune` drops it later.
      }
    },
  };
}

function gitIn(dir: string): SimpleGit {
  // simple-git refuses to set hooksPath unless told: here it points nowhere, to run no hook.
  return simpleGit({
    baseDir: dir,
    config: ['core.hooksPath=/dev/null'],
    unsafe: { allowUnsafeHooksPath: true },
  });
}

import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { GitObjectFormat } from './git-blob-id.js';

const run = promisify(execFile);

/**
 * How the engine runs git over a work tree whose repository config it does not trust:
 * a runner's checkout, whose `.git` and work tree the run's stages could write (a fork's
 * code, in its sandbox or as the stage user), read by the runner's own git, outside any
 * sandbox, after every stage. git runs programs its repository config names on a mere
 * read: `core.fsmonitor` on any read of the index (`ls-files`, `check-ignore`), a
 * promisor remote's transport (`ext::`, a remote helper) when an object is missing, a
 * filter driver's `clean` or `smudge` for `hash-object` and `checkout-index`; and a
 * nested repository a stage made in its work tree brings a config of its own. Each
 * command carries its guard itself, so a stage still running beside the read (a
 * parallel stage) has no moment between a check and a use to slip a setting in.
 */
export interface RepositoryConfigGuard {
  /** Given before every git subcommand: command-line config, which outranks every file's. */
  args: readonly string[];
  /** git's environment, from `env`. */
  environment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
}

/** The monitor off and no transport allowed: what every guarded git command gets. */
export const REPOSITORY_CONFIG_GUARD: RepositoryConfigGuard = {
  args: ['-c', 'core.fsmonitor=false'],
  // An empty list allows no transport, whatever `protocol.*.allow` a config sets; the lazy
  // fetch of a partial clone is a `git fetch` that inherits it.
  environment: (env) => ({ ...env, GIT_ALLOW_PROTOCOL: '' }),
};

/**
 * Runs `task` with the guard for the git commands that apply filters (`hash-object`,
 * `checkout-index`): git then reads its config from a new, empty bare repository of the
 * listing's object format, not from the repository, and the index and objects from where
 * the listing found them. The work tree's `.gitattributes` still choose the conversions
 * (line endings) and the filters of the system's and the user's config (Git LFS) still
 * run; a filter defined in the repository's own config, which only code the reader does
 * not trust put there in a runner's checkout, is no filter.
 */
export async function withoutRepositoryConfig<T>(
  guard: RepositoryConfigGuard,
  root: string,
  /** Where a work-tree listing found the repository (work-tree-listing.ts). */
  listing: { objectFormat: GitObjectFormat; sources: { indexFile: string; commonDir: string } },
  task: (guard: RepositoryConfigGuard) => Promise<T>,
): Promise<T> {
  const configDir = await mkdtemp(path.join(tmpdir(), 'fluksio-git-config-'));
  try {
    await run(
      'git',
      ['init', '--quiet', '--bare', '--template=', `--object-format=${listing.objectFormat}`, configDir],
      { env: guard.environment(process.env) },
    );
    return await task({
      args: guard.args,
      environment: (env) => ({
        ...guard.environment(env),
        GIT_DIR: configDir,
        GIT_WORK_TREE: root,
        GIT_INDEX_FILE: listing.sources.indexFile,
        GIT_OBJECT_DIRECTORY: path.join(listing.sources.commonDir, 'objects'),
      }),
    });
  } finally {
    await rm(configDir, { recursive: true, force: true });
  }
}

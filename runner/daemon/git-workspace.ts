import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, realpath, rename, rm, utimes } from 'node:fs/promises';
import path from 'node:path';
import { checkCloneUrl, checkFetchRef } from './check-checkout-request.js';
import {
  checkoutConfig,
  formatOf,
  isPlainGitDir,
  removeStaleLocks,
  replaceFile,
  resetMirrorConfig,
} from './git-dir-files.js';
import { runGit, type GitCommandOptions } from './git-command.js';
import { checkoutStatCache, removeCheckoutStatCache } from './checkout-stat-cache.js';
import { checkReachable } from './commit-reachability.js';
import { KeyedMutex } from './keyed-mutex.js';
import { redactUrl } from '../../client/redact-url.js';
import { pruneMirrors } from './prune-mirrors.js';

export interface GitWorkspaceOptions {
  /** The runner's work directory: mirrors go under `mirrors/`, checkouts under `checkouts/`. */
  workDir: string;
  /** The runner's environment, of which git gets only PATH, HOME, proxies and CAs (git-command.ts). */
  environment: Readonly<Record<string, string | undefined>>;
  /**
   * The most bytes the mirrors may hold together; past it, after a checkout, the least
   * recently used mirrors not in use go (prune-mirrors.ts). @defaultValue 20 GiB
   */
  maxMirrorBytes?: number;
  /** Told which mirrors a prune removed. */
  onPruned?(mirrors: string[]): void;
}

/** What to check out: a claim's repository and commit, for one concurrency slot. */
export interface CheckoutRequest {
  /** The concurrency slot the run executes in; each slot has its own checkouts. */
  slot: number;
  /** `owner/name`, for directory names and messages. */
  repository: string;
  cloneUrl: string;
  /** A ref to fetch when the commit is on no branch (a fork's `refs/pull/<n>/head`). */
  fetchRef: string | null;
  /** The exact commit to run. */
  commit: string;
  /**
   * A fork's run: checked out apart from trusted runs. Its stages can write their
   * checkout's `.git`, and a loose object planted there under a blob's id would be what a
   * later trusted checkout of that blob reads. @defaultValue false
   */
  fork?: boolean;
  /**
   * The run's stages will be sandboxed, and so were the last ones in this checkout (a
   * runner sandboxes the same runs throughout): code the runner does not trust wrote
   * there. Its `.git` (a `commondir` or `gitdir:` file leading git to another config, a
   * submodule's config under `modules/`, with filter drivers the committed
   * `.gitattributes` names) would make the runner's own git run a program outside the
   * sandbox, so the checkout is made anew. @defaultValue false
   */
  untrusted?: boolean;
  /** `http.extraHeader` for the fetch (an installation token), or null. */
  extraHeader: string | null;
  /** Kills the git command in progress. */
  signal?: AbortSignal;
}

/**
 * Repositories on a runner's disk: a bare mirror per repository under `mirrors/`, into
 * which exactly the claimed commit is fetched, and a checkout per concurrency slot and
 * repository (and one more for fork runs) under `checkouts/<slot>/`, reused from run to run (switching a warm
 * checkout costs ~0.1 s, a fresh clone seconds: NOTES.md) unless its stages run sandboxed. A checkout borrows the
 * mirror's objects (`objects/info/alternates`) instead of copying them. Mirrors keep
 * full history, so each fetch is incremental; past a size cap the least recently used
 * go, with their checkouts, unless a slot's run uses them.
 */
export class GitWorkspace {
  private readonly mirrorLocks = new KeyedMutex();
  /** The mirror of each slot's current (or last) run: what a prune leaves alone. */
  private readonly slotMirrors = new Map<number, string>();
  private pruning: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: GitWorkspaceOptions) {}

  /**
   * Fetches the commit into the repository's mirror, checks it out detached in the
   * slot's checkout (forced, cleaned of everything untracked or ignored), with its
   * submodules, then verifies that HEAD is the commit and the tree is clean. Resolves
   * with the checkout's real path; rejects with a sentence naming what went wrong.
   */
  async checkout(request: CheckoutRequest): Promise<string> {
    const url = checkCloneUrl(request.cloneUrl);
    if (request.fetchRef !== null) checkFetchRef(request.fetchRef);
    const { mirror, checkout } = this.pathsOf(request);
    // Marked before the lock is asked for: a prune waiting for the same lock sees it.
    this.slotMirrors.set(request.slot, mirror);
    await this.mirrorLocks.run(mirror, async () => {
      await this.fetchIntoMirror(mirror, url, request);
      const now = new Date();
      await utimes(mirror, now, now);
    });
    await this.checkoutInSlot(checkout, mirror, url, request);
    await this.prune();
    return realpath(checkout);
  }

  /**
   * The checkout of a run resumed after the runner was restarted, as the run left it: a
   * Slurm job may still run in it, writing its outputs, so nothing is fetched, checked out
   * or cleaned. Its `.git` must be a plain one (its config is written anew, as before
   * every run) and its HEAD the run's commit; rejects with a sentence otherwise. Resolves
   * with the checkout's real path.
   */
  async reopen(request: CheckoutRequest): Promise<string> {
    const url = checkCloneUrl(request.cloneUrl);
    const { mirror, checkout } = this.pathsOf(request);
    this.slotMirrors.set(request.slot, mirror);
    const gitDir = path.join(checkout, '.git');
    if (!existsSync(path.join(gitDir, 'HEAD')) || !(await isPlainGitDir(gitDir))) {
      throw new Error(
        `The checkout of the resumed run (${checkout}) is gone or not a plain git checkout; expected the one its runner left`,
      );
    }
    await replaceFile(path.join(gitDir, 'config'), checkoutConfig(url, request.commit));
    const head = (
      await runGit(['rev-parse', '--verify', 'HEAD'], this.gitOptions(checkout, url, request))
    ).trim();
    if (head !== request.commit) {
      throw new Error(
        `The checkout of the resumed run is at ${head}, not the run's commit ${request.commit}`,
      );
    }
    return realpath(checkout);
  }

  /** Removes least recently used mirrors past the size cap; one prune at a time. */
  private prune(): Promise<void> {
    const next = this.pruning.then(async () => {
      const removed = await pruneMirrors({
        workDir: this.options.workDir,
        maxBytes: this.options.maxMirrorBytes ?? 20 * 1024 ** 3,
        inUse: (mirror) => [...this.slotMirrors.values()].includes(mirror),
        withMirror: (mirror, task) => this.mirrorLocks.run(mirror, task),
      });
      if (removed.length > 0) this.options.onPruned?.(removed);
    });
    this.pruning = next.catch(() => undefined);
    return next;
  }

  /**
   * Where a request's mirror and checkout are (or will be) in the work directory, and
   * the mirror's object directory the checkout borrows from: a sandbox binds exactly those.
   */
  pathsOf(request: Pick<CheckoutRequest, 'slot' | 'repository' | 'cloneUrl' | 'fork'>): {
    mirror: string;
    borrowedObjects: string;
    checkout: string;
    statCache: string;
  } {
    const key = `${request.repository.replace(/[^A-Za-z0-9._-]+/g, '_')}-${sha256(request.cloneUrl).slice(0, 12)}`;
    const mirror = path.join(this.options.workDir, 'mirrors', `${key}.git`);
    const checkout = path.join(
      this.options.workDir,
      'checkouts',
      String(request.slot),
      request.fork ? `${key}-fork` : key,
    );
    return {
      mirror,
      borrowedObjects: path.join(mirror, 'objects'),
      checkout,
      statCache: checkoutStatCache(checkout),
    };
  }

  private async fetchIntoMirror(mirror: string, url: string, request: CheckoutRequest): Promise<void> {
    const { commit } = request;
    if (!existsSync(path.join(mirror, 'HEAD'))) await this.createMirror(mirror, commit);
    await resetMirrorConfig(mirror, commit);
    const git = (args: string[], extra: Partial<GitCommandOptions> = {}) =>
      runGit(args, { ...this.gitOptions(mirror, url, request), ...extra });
    // The header is passed to the fetches and to nothing else.
    const header = request.extraHeader ? { extraHeader: { url, value: request.extraHeader } } : {};
    const slotRef = `refs/fluksio/slot-${request.slot}`;
    // Another run of the same commit (a sweep) already brought it: content-addressed, so the same.
    if (await hasCommit(git, commit)) {
      await checkReachable(git, url, request, header);
      return;
    }
    await removeStaleLocks(mirror, ['packed-refs.lock', `refs/fluksio/slot-${request.slot}.lock`]);
    const fetch = (want: string) =>
      git(
        ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--', url, `+${want}:${slotRef}`],
        header,
      );
    try {
      if (request.fetchRef) {
        // A ref the server does not have (yet) fails nothing by itself: the commit is then
        // fetched by its id, and checkReachable says whether anything reaches it.
        await fetch(request.fetchRef).catch(() => undefined);
        if (!(await hasCommit(git, commit))) await fetch(commit);
      } else {
        await fetch(commit);
      }
    } catch (error) {
      throw new Error(
        `Could not fetch commit ${commit} of ${request.repository} from ${redactUrl(url)}` +
          `${request.fetchRef ? ` (ref ${request.fetchRef})` : ''}: ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (!(await hasCommit(git, commit))) {
      throw new Error(
        `Commit ${commit} is not in ${request.repository}${request.fetchRef ? ` at ${request.fetchRef}` : ''}: ` +
          'it was force-pushed away or never pushed; expected a commit the repository has',
      );
    }
    await checkReachable(git, url, request, header);
  }

  /** A bare repository, made under a temporary name and renamed: a crash leaves no half mirror. */
  private async createMirror(mirror: string, commit: string): Promise<void> {
    const temp = `${mirror}.${randomUUID()}.tmp`;
    await mkdir(path.dirname(mirror), { recursive: true });
    try {
      await runGit(
        ['init', '--quiet', '--bare', '--template=', `--object-format=${formatOf(commit)}`, temp],
        {
          cwd: path.dirname(mirror),
          environment: this.options.environment,
          allowFile: false,
        },
      );
      await rename(temp, mirror);
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  }

  private async checkoutInSlot(
    dir: string,
    mirror: string,
    url: string,
    request: CheckoutRequest,
  ): Promise<void> {
    const git = (args: string[]) => runGit(args, this.gitOptions(dir, url, request));
    const { commit } = request;
    // The last run's stages could write here: a symlink planted in `.git` would make the
    // writes below land wherever it points, as the runner's user. Such a checkout, and
    // any a sandboxed stage could write, is thrown away and made again.
    if (request.untrusted || !(await isPlainGitDir(path.join(dir, '.git')))) {
      await rm(dir, { recursive: true, force: true });
      await removeCheckoutStatCache(dir);
    }
    if (!existsSync(path.join(dir, '.git', 'HEAD'))) {
      await mkdir(dir, { recursive: true });
      await git(['init', '--quiet', '--template=', `--object-format=${formatOf(commit)}`]);
    }
    // Written anew each run: the previous run's stages could write into .git, and what
    // git reads from here must be ours. The origin URL resolves relative submodule URLs.
    await replaceFile(path.join(dir, '.git', 'config'), checkoutConfig(url, commit));
    await mkdir(path.join(dir, '.git', 'objects', 'info'), { recursive: true });
    await replaceFile(
      path.join(dir, '.git', 'objects', 'info', 'alternates'),
      `${path.join(mirror, 'objects')}\n`,
    );

    await removeStaleLocks(path.join(dir, '.git'), ['index.lock', 'HEAD.lock']);
    await git(['checkout', '--quiet', '--force', '--detach', commit]);
    await git(['clean', '-ffdxq']);
    if (existsSync(path.join(dir, '.gitmodules'))) {
      try {
        await git(['submodule', '--quiet', 'update', '--init', '--recursive', '--force']);
        await git(['submodule', '--quiet', 'foreach', '--recursive', 'git clean -ffdxq']);
      } catch (error) {
        throw new Error(`Could not check out the submodules of ${commit}: ${(error as Error).message}`, {
          cause: error,
        });
      }
    }
    await verifyCheckout(git, commit);
  }

  private gitOptions(cwd: string, url: string, request: CheckoutRequest): GitCommandOptions {
    return {
      cwd,
      environment: this.options.environment,
      allowFile: url.startsWith('file://'),
      ...(request.signal ? { signal: request.signal } : {}),
    };
  }
}

/**
 * HEAD must be the claimed commit and the tree (submodules included) exactly HEAD's:
 * nothing runs otherwise (DESIGN §5). One `git status` answers both.
 */
async function verifyCheckout(git: (args: string[]) => Promise<string>, commit: string): Promise<void> {
  const status = await git([
    'status',
    '--porcelain=v2',
    '-z',
    '--branch',
    '--untracked-files=all',
    '--ignore-submodules=none',
  ]);
  const records = status.split('\0').filter((record) => record !== '');
  const head = records.find((record) => record.startsWith('# branch.oid '))?.slice('# branch.oid '.length);
  if (head !== commit) {
    throw new Error(
      `The checkout's HEAD is ${head ?? 'unknown'}, not the claimed commit ${commit}; nothing was run`,
    );
  }
  const changed = records.filter((record) => !record.startsWith('#'));
  if (changed.length > 0) {
    const paths = changed.slice(0, 5).map((record) => record.split(' ').at(-1));
    throw new Error(
      `The checkout of ${commit} is not clean after a forced checkout and clean: ${paths.join(', ')}` +
        `${changed.length > 5 ? ` and ${changed.length - 5} more` : ''}; nothing was run`,
    );
  }
}

async function hasCommit(git: (args: string[]) => Promise<string>, commit: string): Promise<boolean> {
  return git(['cat-file', '-e', `${commit}^{commit}`]).then(
    () => true,
    () => false,
  );
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

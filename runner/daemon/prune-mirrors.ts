import { lstat, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { removeCheckoutStatCache } from './checkout-stat-cache.js';

export interface PruneMirrorsOptions {
  /** The runner's work directory: mirrors under `mirrors/<key>.git`, checkouts under `checkouts/<slot>/<key>[-fork]`. */
  workDir: string;
  /** The most bytes the mirrors may hold together; past it, the least recently used go. */
  maxBytes: number;
  /** Whether a mirror is in use now (a slot's run checked out from it): such a mirror stays. */
  inUse(mirror: string): boolean;
  /** Runs `task` holding the mirror's lock, so no fetch into it runs while it is removed. */
  withMirror(mirror: string, task: () => Promise<void>): Promise<void>;
}

/**
 * Keeps a runner's git mirrors under a size cap, as the blob cache is kept (issue 12):
 * every repository a runner ever ran stayed on its disk for good. Mirrors are ranked by
 * their last use (the directory's mtime, which each checkout refreshes, so the order
 * survives a restart); the least recently used go, with the checkouts that borrow their
 * objects, until the rest fit. A mirror in use is never removed, even if the others alone
 * cannot bring the total under the cap. Returns the mirrors removed.
 */
export async function pruneMirrors(options: PruneMirrorsOptions): Promise<string[]> {
  const root = path.join(options.workDir, 'mirrors');
  const names = (await readdir(root).catch(() => [] as string[])).filter((name) => name.endsWith('.git'));
  const mirrors = await Promise.all(
    names.map(async (name) => {
      const dir = path.join(root, name);
      const [bytes, stats] = await Promise.all([directoryBytes(dir), stat(dir)]);
      return { dir, key: name.slice(0, -'.git'.length), bytes, usedAt: stats.mtimeMs };
    }),
  );
  let total = mirrors.reduce((sum, mirror) => sum + mirror.bytes, 0);
  const removed: string[] = [];
  for (const mirror of mirrors.sort((a, b) => a.usedAt - b.usedAt)) {
    if (total <= options.maxBytes) break;
    if (options.inUse(mirror.dir)) continue;
    await options.withMirror(mirror.dir, async () => {
      // Asked for again while this waited for the lock: its run is checking it out.
      if (options.inUse(mirror.dir)) return;
      const slots = await readdir(path.join(options.workDir, 'checkouts')).catch(() => [] as string[]);
      for (const slot of slots) {
        for (const checkout of [mirror.key, `${mirror.key}-fork`]) {
          const dir = path.join(options.workDir, 'checkouts', slot, checkout);
          await rm(dir, { recursive: true, force: true });
          await removeCheckoutStatCache(dir);
        }
      }
      await rm(mirror.dir, { recursive: true, force: true });
      total -= mirror.bytes;
      removed.push(mirror.dir);
    });
  }
  return removed;
}

/** The disk space `dir` takes, as `du` counts it: the blocks of it and of everything under it, links not followed. */
async function directoryBytes(dir: string): Promise<number> {
  const blocks = async (file: string) => ((await lstat(file).catch(() => null))?.blocks ?? 0) * 512;
  let total = await blocks(dir);
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  for (const entry of entries) total += await blocks(path.join(entry.parentPath, entry.name));
  return total;
}

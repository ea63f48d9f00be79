import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Removes what runs that ended without cleaning up (killed outright, a power cut) left in a
 * pipeline's `.fluksio/`: their live stage logs (`live/<run>/`) and their private folders
 * (`run-*`: stages' homes, temporary files and bytecode). Only called with the store's lock
 * held, when no run of this store is going: everything there is abandoned. Returns how many
 * folders it removed.
 */
export async function removeAbandonedRunFiles(stateDir: string, liveDir: string): Promise<number> {
  const live = (await readdir(liveDir).catch(() => [] as string[])).map((name) => join(liveDir, name));
  const privateRoots = (await readdir(stateDir).catch(() => [] as string[]))
    .filter((name) => name.startsWith('run-'))
    .map((name) => join(stateDir, name));
  for (const dir of [...live, ...privateRoots]) await rm(dir, { recursive: true, force: true });
  return live.length + privateRoots.length;
}

import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * fluksio's folder in the user's cache: `$FLUKSIO_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/fluksio`, else `~/.cache/fluksio`. Only things that can be made again
 * live there (the empty-store template).
 */
export function userCacheDir(env: Readonly<Record<string, string | undefined>>): string {
  if (env.FLUKSIO_CACHE_DIR) return env.FLUKSIO_CACHE_DIR;
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, 'fluksio');
  const home = env.HOME || homedir();
  return home ? join(home, '.cache', 'fluksio') : join(tmpdir(), 'fluksio-cache');
}

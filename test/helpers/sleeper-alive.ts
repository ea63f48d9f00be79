import { readdir, readFile } from 'node:fs/promises';

/**
 * Whether some process on this machine runs `sleep <marker>`: a process a stage started
 * that outlived it. Tests pick a marker no other test sleeps for.
 */
export async function sleeperAlive(marker: number): Promise<boolean> {
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline === `sleep\0${marker}\0`) return true;
  }
  return false;
}

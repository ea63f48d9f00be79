import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Creates `root/name` with the empty `home`, `tmp` and `pycache` folders a stage's
 * environment points at (see `stageEnvironment`), and returns its path. Each stage gets
 * its own, so that nothing one stage leaves in its home or temporary folder is read by
 * another — whose key could not say so — and none survives the run.
 */
export async function makePrivateDir(root: string, name: string): Promise<string> {
  const dir = join(root, name);
  for (const sub of ['home', 'tmp', 'pycache']) await mkdir(join(dir, sub), { recursive: true });
  return dir;
}

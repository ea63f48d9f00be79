import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What `.fluksio/.gitignore` holds: the folder ignores itself, so git and the code digest never see it. */
const STATE_DIR_IGNORE = '# fluksio local state: runs, cache and blobs\n*\n';

/**
 * Creates a `.fluksio/` state folder if needed and makes it ignore itself. The file is
 * written only when it does not already say so: every run passes here, and writing a
 * file costs this machine's file systems many times what reading one does.
 */
export async function ignoreStateDir(stateDir: string): Promise<void> {
  const file = join(stateDir, '.gitignore');
  if ((await readFile(file, 'utf8').catch(() => null)) === STATE_DIR_IGNORE) return;
  await mkdir(stateDir, { recursive: true });
  await writeFile(file, STATE_DIR_IGNORE);
}

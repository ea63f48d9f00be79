import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

/**
 * The text of the file at `absolute` when it exists and, symbolic links resolved, lies
 * inside `root`; undefined otherwise. For the files a pipeline file names (a DVC params or
 * vars file), which are read only inside the repository.
 */
export function readFileInside(root: string, absolute: string): string | undefined {
  if (!existsSync(absolute)) return undefined;
  const real = realpathSync(absolute);
  if (!real.startsWith(realpathSync(root) + path.sep)) return undefined;
  return readFileSync(real, 'utf8');
}

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The files of `dir` as this repository commits them, by path relative to `dir`, and
 * nothing a run left there (outputs, `.fluksio/`, bytecode): what `npm start` wrote into
 * an example must not change a test that copies the example.
 */
export function committedFiles(dir: string): Record<string, string> {
  const listed = execFileSync('git', ['ls-files', '-z', '--', '.'], { cwd: dir, encoding: 'utf8' });
  return Object.fromEntries(
    listed
      .split('\0')
      .filter(Boolean)
      .map((name) => [name, readFileSync(join(dir, name), 'utf8')]),
  );
}

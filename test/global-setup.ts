import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import which from 'which';
// @ts-expect-error: a plain ES module script, shared with `npm run build`.
import { bundleCli } from '../scripts/bundle-cli.mjs';
// @ts-expect-error: a plain ES module script, shared with `npm run build`.
import { bundlePages } from '../scripts/bundle-pages.mjs';

/** Where tests find the `fluksio` command bundled from the current sources (an entry calling it). */
export const TEST_BUNDLE = fileURLToPath(new URL('./helpers/fluksio-test-bin.mjs', import.meta.url));
const TEST_BUNDLE_DIR = fileURLToPath(new URL('../build/test', import.meta.url));
/** Where the run pages' bundle is served from (app/pages/page-assets.ts). */
const PAGES_BUNDLE_DIR = fileURLToPath(new URL('../build/pages', import.meta.url));

/** Bundles the command and the run pages once per test run, so tests spawn the code under test, not a stale build. */
export default async function setup(): Promise<void> {
  putLaunchedPythonFirst();
  await (bundleCli as (outdir: string) => Promise<void>)(TEST_BUNDLE_DIR);
  await (bundlePages as (outdir: string) => Promise<void>)(PAGES_BUNDLE_DIR);
}

/**
 * The suite's stages start `python3` from PATH. Where that is a version manager's shim
 * (pyenv's on this machine: a bash script taking about 0.3 s of CPU to choose the
 * interpreter), every `fluksio run` asks it which interpreter it starts
 * (runner/keys/launched-python.ts) and every stage starts it again: over the suite's
 * thousand-odd runs, minutes of a 2-core CI machine. The test processes (which inherit
 * this one's environment) get the folder of the interpreter it starts first on PATH:
 * the same Python, without the shim. How fluksio keys shims is tested with shims the
 * tests make (test/engine/cache-never-stale-launcher*.test.ts), on PATH ahead of this.
 */
function putLaunchedPythonFirst(): void {
  const found = which.sync('python3', { nothrow: true });
  if (!found) return;
  const head = Buffer.alloc(2);
  const file = openSync(found, 'r');
  try {
    readSync(file, head, 0, 2, 0);
  } finally {
    closeSync(file);
  }
  if (head.toString('latin1') !== '#!') return;
  let executable: string;
  try {
    executable = execFileSync(found, ['-c', 'import sys; print(sys.executable)'], {
      encoding: 'utf8',
    }).trim();
  } catch {
    // A shim that cannot start Python here: the tests meet it as it is.
    return;
  }
  const folder = dirname(executable);
  const path = (process.env.PATH ?? '').split(delimiter);
  // A folder already on PATH (`/usr/bin`) is not moved ahead of the others: other programs
  // of it would then be found before the ones the tests find now.
  if (!executable || path.includes(folder)) return;
  process.env.PATH = [folder, ...path].join(delimiter);
}

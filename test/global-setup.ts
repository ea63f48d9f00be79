import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain ES module script, shared with `npm run build`.
import { bundleCli } from '../scripts/bundle-cli.mjs';

/** Where tests find the `fluksio` command bundled from the current sources. */
export const TEST_BUNDLE = fileURLToPath(new URL('../build/test/fluksio.mjs', import.meta.url));

/** Bundles the command once per test run, so tests spawn the code under test, not a stale build. */
export default async function setup(): Promise<void> {
  await (bundleCli as (outfile: string) => Promise<void>)(TEST_BUNDLE);
}

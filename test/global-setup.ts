import { fileURLToPath } from 'node:url';
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
  await (bundleCli as (outdir: string) => Promise<void>)(TEST_BUNDLE_DIR);
  await (bundlePages as (outdir: string) => Promise<void>)(PAGES_BUNDLE_DIR);
}

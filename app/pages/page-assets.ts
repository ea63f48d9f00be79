import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The pages' browser bundle, as scripts/bundle-pages.mjs wrote it. */
export interface PageAssets {
  js: string;
  css: string;
}

/**
 * Reads the bundle from `dir`, by default `build/pages` of the fluksio package this
 * module belongs to (found by walking up to its package.json, so the sources, the test
 * bundle and `npm run build`'s bundle all find it). Throws a sentence naming the fix.
 */
export async function readPageAssets(dir = defaultPageAssetDir()): Promise<PageAssets> {
  try {
    const [js, css] = await Promise.all([
      readFile(join(dir, 'pages.js'), 'utf8'),
      readFile(join(dir, 'pages.css'), 'utf8'),
    ]);
    return { js, css };
  } catch (error) {
    throw new Error(`The run pages' bundle is missing from ${dir}: build it with "npm run build"`, {
      cause: error,
    });
  }
}

function defaultPageAssetDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'build', 'pages');
}

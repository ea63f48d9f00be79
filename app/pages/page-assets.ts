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
 * Reads the bundle from `dir`, by default the nearest `build/pages/` above this module
 * that holds it (so the sources, the test bundle and `npm run build`'s bundle all find
 * it; a package.json cannot mark the package root, as tsc writes a copy into `build/`).
 * Throws a sentence naming the fix.
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
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; dirname(dir) !== dir; dir = dirname(dir)) {
    if (existsSync(join(dir, 'build', 'pages', 'pages.js'))) return join(dir, 'build', 'pages');
  }
  // Not built: the error names where the package's build would put it.
  let root = start;
  while (!existsSync(join(root, 'drizzle')) && dirname(root) !== root) root = dirname(root);
  return join(root, 'build', 'pages');
}

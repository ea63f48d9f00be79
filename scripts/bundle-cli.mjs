// Bundles the `fluksio` command into one ES module (bin/fluksio.js loads it): a single
// file parses and starts in about half the time of the ~150 modules it is made of.
// `npm run build` runs this; tests bundle to a path of their own through bundleCli().
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Writes the bundle of cli/main.ts to `outfile`. */
export async function bundleCli(outfile) {
  await build({
    entryPoints: [`${root}cli/main.ts`],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // PGlite finds its WebAssembly and data files next to its own modules.
    external: ['@electric-sql/pglite'],
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleCli(`${root}build/fluksio.mjs`);
}

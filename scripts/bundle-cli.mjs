// Bundles the `fluksio` command into ES modules (bin/fluksio.js loads main.mjs): a few
// files parse and start in about half the time of the hundreds of modules they are made
// of, and the server's commands (fastify, BullMQ) are chunks `fluksio run` never loads.
// `npm run build` runs this; tests bundle to a folder of their own through bundleCli().
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Writes the bundle of cli/main.ts to `outdir`/main.mjs, with its lazily loaded chunks. */
export async function bundleCli(outdir) {
  await build({
    entryPoints: { main: `${root}cli/main.ts` },
    outdir,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // PGlite finds its WebAssembly and data files next to its own modules.
    external: ['@electric-sql/pglite'],
    banner: {
      // Bundled CommonJS modules call require(); a module of the bundle may import createRequire itself.
      js: "import { createRequire as __fluksioCreateRequire } from 'node:module'; const require = __fluksioCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleCli(`${root}build/bundle`);
}

// Bundles the `fluksio` command into ES modules (bin/fluksio.js loads main.mjs): a few
// files parse and start in about half the time of the hundreds of modules they are made
// of, and the server's commands (fastify, BullMQ) are chunks `fluksio run` never loads.
// `npm run build` runs this; tests bundle to a folder of their own through bundleCli().
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * zod exports every locale it has (`z.locales`, some 50 modules, over half of zod's
 * code), which every `fluksio run` would parse before its first git call; fluksio
 * speaks English only and never reads `z.locales`. The bundle's `z.locales` holds `en`
 * alone, the locale zod configures itself with.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(builder) {
    builder.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, ({ importer }) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(importer)
        ? { path: join(dirname(importer), '..', 'locales', 'en.js'), namespace: 'zod-english-only' }
        : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, ({ path }) => ({
      contents: `export { default as en } from ${JSON.stringify(path)};`,
      resolveDir: dirname(path),
    }));
  },
};

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
    plugins: [zodEnglishOnly],
    logLevel: 'warning',
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleCli(`${root}build/bundle`);
}

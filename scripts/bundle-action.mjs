// Builds the GitHub Action into dist/ (`npm run build:action`), which is committed:
// GitHub runs `node dist/index.mjs` (and `dist/post-index.mjs`) from a checkout of this
// repository, with no node_modules. So dist/ holds everything the action loads at run
// time — the two steps' logic (main.mjs and post.mjs, each exporting `run()` and doing
// nothing on import, as actions/typescript-action lays them out, so that GitHub's
// @github/local-action can import and call them once), the two entry points that call
// them, PGlite's WebAssembly and data files (PGlite reads them next to its own
// module, which is now main.mjs), and the migrations the local store applies (found
// by walking up from main.mjs to dist/package.json). The output depends only on the
// sources and the locked dependencies, so CI can rebuild it and compare (.ci/run).
import { build } from 'esbuild';
import { copyFile, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The files PGlite loads beside its module at run time. */
const PGLITE_FILES = ['pglite.wasm', 'pglite.data', 'initdb.wasm'];

/** The entry points action.yml names, each calling the `run()` of one step's bundle. */
const STEP_ENTRIES = { 'index.mjs': 'main.mjs', 'post-index.mjs': 'post.mjs' };

/** Writes the action's bundle to `outdir` (default dist/), replacing what was there. */
export async function bundleAction(outdir = join(root, 'dist')) {
  await rm(outdir, { recursive: true, force: true });
  await build({
    absWorkingDir: root,
    entryPoints: { main: 'action/main.ts', post: 'action/post.ts' },
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    // The oldest runtime the bundle is tested on; GitHub runs it on Node 24 (action.yml).
    target: 'node20',
    // CommonJS dependencies call require() for Node's modules; ES modules have none. The
    // import is renamed: a bundled module importing createRequire itself would clash.
    banner: {
      js: "import { createRequire as __fluksioCreateRequire } from 'node:module'; const require = __fluksioCreateRequire(import.meta.url);",
    },
    legalComments: 'eof',
    logLevel: 'warning',
  });

  for (const [entry, logic] of Object.entries(STEP_ENTRIES)) {
    await writeFile(
      join(outdir, entry),
      `// The action's ${logic.replace('.mjs', '')} step, as action.yml runs it: ${logic} holds its logic.\nimport { run } from './${logic}';\n\nawait run();\n`,
    );
  }

  const pgliteDir = dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
  for (const file of PGLITE_FILES) await copyFile(join(pgliteDir, file), join(outdir, file));

  // The migrations as drizzle's migrator reads them: the journal and the SQL files.
  await mkdir(join(outdir, 'drizzle', 'meta'), { recursive: true });
  await copyFile(
    join(root, 'drizzle', 'meta', '_journal.json'),
    join(outdir, 'drizzle', 'meta', '_journal.json'),
  );
  for (const file of (await readdir(join(root, 'drizzle'))).filter((name) => name.endsWith('.sql')).sort()) {
    await copyFile(join(root, 'drizzle', file), join(outdir, 'drizzle', file));
  }
  await writeFile(
    join(outdir, 'package.json'),
    `${JSON.stringify(
      {
        private: true,
        type: 'module',
        description: 'The fluksio action, built by `npm run build:action`; do not edit by hand.',
      },
      null,
      2,
    )}\n`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundleAction();
}

// Bundles the run pages' browser code (pages/main.ts, uPlot, anser) and their styles into
// build/pages/, which `fluksio app` and `fluksio ui` serve. `npm run build` runs this;
// tests bundle through bundlePages() in their global setup.
import { build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Writes `outdir`/pages.js and `outdir`/pages.css. */
export async function bundlePages(outdir) {
  await mkdir(outdir, { recursive: true });
  await build({
    entryPoints: [`${root}pages/main.ts`],
    outfile: `${outdir}/pages.js`,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    logLevel: 'warning',
  });
  const css = await Promise.all([
    readFile(`${root}node_modules/uplot/dist/uPlot.min.css`, 'utf8'),
    readFile(`${root}pages/pages.css`, 'utf8'),
  ]);
  await writeFile(`${outdir}/pages.css`, css.join('\n'));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await bundlePages(`${root}build/pages`);
}

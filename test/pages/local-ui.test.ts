import { afterAll, beforeAll, expect, test } from 'vitest';
import { launchChromium, type TestBrowser } from '../helpers/chromium.js';
import { spawnFluksio, type FluksioProcess } from '../helpers/fluksio-process.js';
import type { TestRepo } from '../helpers/make-repo.js';
import { makeMlProject } from '../helpers/ml-project.js';
import { runCli } from '../helpers/run-cli.js';

let project: TestRepo;
let browser: TestBrowser;
let ui: FluksioProcess | undefined;

beforeAll(async () => {
  [project, browser] = await Promise.all([
    makeMlProject({
      'prepare.py': `import os, sys
seed = int(sys.argv[1])
rows = [int(line) for line in open("raw.csv") if line.strip()]
os.makedirs("data", exist_ok=True)
with open("data/clean.csv", "w") as f:
    f.write("\\n".join(str(r * 10 + seed) for r in rows) + "\\n")
for i in range(1, 11):
    print(f"\\rrows: {i * 10:3d}%|{'#' * i:<10}|", end="", flush=True)
print()
print("\\x1b[31mprepared\\x1b[0m", len(rows), "rows")
`,
    }),
    launchChromium(),
  ]);
  const run = await runCli(['run', 'epochs=4'], { cwd: project.dir });
  expect(run.code, run.stdout + run.stderr).toBe(0);
});
afterAll(async () => {
  await ui?.stop('SIGINT');
  await browser?.close();
  await project?.cleanup();
});

test('fluksio ui serves the newest run on 127.0.0.1 behind a one-time secret: with it the run page, without it 403', async () => {
  ui = spawnFluksio(['ui', '--no-open', '--json'], { cwd: project.dir });
  const { url } = JSON.parse(await ui.waitFor(/"url"/, 60_000)) as { url: string };
  const address = new URL(url);
  expect(address.hostname).toBe('127.0.0.1');
  const secret = address.searchParams.get('token');
  expect(secret).toMatch(/^[0-9a-f]{48}$/);

  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.locator('main[data-final="true"]').waitFor();
    expect(await page.locator('#run-status').textContent()).toBe('succeeded');
    await page.locator('figure[data-metric="loss"][data-points="4"]').waitFor();
    const prepare = page.locator('#log-prepare');
    await prepare
      .locator('[data-complete="true"]')
      .or(page.locator('#log-prepare[data-complete="true"]'))
      .waitFor();
    // The progress bar's ten states are one line, showing the last; colours are kept.
    expect(await prepare.locator('li .lt').allTextContents()).toEqual([
      'rows: 100%|##########|',
      'prepared 4 rows',
    ]);
    expect(await prepare.locator('li .lt span', { hasText: 'prepared' }).count()).toBe(1);
    await browser.screenshot(page, 'local-run-page');

    const bare = `${address.origin}${address.pathname}`;
    expect((await page.goto(bare))?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('Forbidden');
    expect((await page.goto(`${bare}?token=${'0'.repeat(48)}`))?.status()).toBe(403);
    const api = await fetch(`${address.origin}/pages/api${address.pathname}`);
    expect(api.status).toBe(403);
  } finally {
    await page.context().close();
  }
  expect(await ui.stop('SIGINT')).toBe(0);
  ui = undefined;
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
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

test('fluksio ui follows a run another fluksio run is executing: a line printed after the page opened appears, then the finished state', async () => {
  // train waits for a file outside the repository (named by DEVICE, which the pipeline passes on).
  const live = await makeMlProject({
    'train.py': `import json, os, sys, time
print("training started", flush=True)
print("::metric name=loss::0.5", flush=True)
deadline = time.time() + 120
while not os.path.exists(os.environ["DEVICE"]) and time.time() < deadline:
    time.sleep(0.05)
print("printed after the page opened", flush=True)
print("::metric name=loss::0.25", flush=True)
with open("model.txt", "w") as f:
    f.write("lr=0.1 loss=0.25\\n")
os.makedirs("metrics", exist_ok=True)
json.dump({"loss": 0.25}, open("metrics/train.json", "w"))
`,
  });
  const signals = await mkdtemp(join(tmpdir(), 'fluksio-live-'));
  const go = join(signals, 'go');
  const running = spawnFluksio(['run'], { cwd: live.dir, env: { DEVICE: go } });
  let liveUi: FluksioProcess | undefined;
  const page = await browser.newPage();
  try {
    // The run has started train once its live log holds the first line.
    const liveDir = join(live.dir, '.fluksio', 'live');
    await vi.waitFor(
      () => {
        const [runDir] = existsSync(liveDir) ? readdirSync(liveDir) : [];
        expect(runDir && readFileSync(join(liveDir, runDir, 'train.log'), 'utf8')).toContain(
          'training started',
        );
      },
      { timeout: 120_000, interval: 100 },
    );
    liveUi = spawnFluksio(['ui', '--no-open', '--json'], { cwd: live.dir });
    const { url } = JSON.parse(await liveUi.waitFor(/"url"/, 60_000)) as { url: string };
    await page.goto(url);
    await page.locator('#run-status', { hasText: 'running' }).waitFor();
    const train = page.locator('#log-train');
    await train.locator('li', { hasText: 'training started' }).waitFor();
    await page.locator('figure[data-metric="loss"][data-points="1"]').waitFor();

    await writeFile(go, '');
    await train.locator('li', { hasText: 'printed after the page opened' }).waitFor({ timeout: 60_000 });
    expect(await running.exited).toBe(0);
    await page.locator('main[data-final="true"]').waitFor({ timeout: 60_000 });
    expect(await page.locator('#run-status').textContent()).toBe('succeeded');
    await page.locator('#log-train[data-complete="true"]').waitFor();
    expect(await train.locator('li .lt').allTextContents()).toEqual([
      'training started',
      'printed after the page opened',
    ]);
    await page.locator('figure[data-metric="loss"][data-points="2"]').waitFor();
    // The live logs go once the run has ended: each stage's log is in the blob store.
    expect(existsSync(liveDir) ? readdirSync(liveDir) : []).toEqual([]);
  } catch (error) {
    throw new Error(`run: ${running.output()}\nui: ${liveUi?.output() ?? ''}`, { cause: error });
  } finally {
    await page.context().close();
    await liveUi?.stop('SIGINT');
    await running.stop('SIGINT');
    await rm(signals, { recursive: true, force: true });
    await live.cleanup();
  }
}, 300_000);

test("fluksio ui downloads a run's output verified: the out's bytes, named after it; a corrupted blob's download fails and is logged", async () => {
  const outUi = spawnFluksio(['ui', '--no-open', '--json'], { cwd: project.dir });
  try {
    const { url } = JSON.parse(await outUi.waitFor(/"url"/, 60_000)) as { url: string };
    const address = new URL(url);
    const token = address.searchParams.get('token')!;
    const data = (await (
      await fetch(`${address.origin}/pages/api${address.pathname}?token=${token}`)
    ).json()) as {
      report: { stages: { name: string; outs: { path: string; digest: string; size: number }[] }[] };
    };
    const model = data.report.stages.find((stage) => stage.name === 'train')!.outs[0]!;
    expect(model.path).toBe('model.txt');
    const bytes = readFileSync(join(project.dir, 'model.txt'));
    const download = `${address.origin}/pages/api${address.pathname}/outs/${model.digest}?token=${token}`;

    const answer = await fetch(download);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-length')).toBe(String(model.size));
    expect(answer.headers.get('content-disposition')).toContain('filename="model.txt"');
    expect(Buffer.from(await answer.arrayBuffer())).toEqual(bytes);
    // The secret guards downloads as it guards pages.
    expect((await fetch(download.replace(/\?token=.*$/, ''))).status).toBe(403);

    const hex = model.digest.slice('sha256:'.length);
    const blob = join(project.dir, '.fluksio', 'blobs', 'sha256', hex.slice(0, 2), hex);
    const kept = readFileSync(blob);
    await writeFile(blob, Buffer.from(kept.toString().toUpperCase()));
    try {
      await expect(fetch(download).then((failed) => failed.arrayBuffer())).rejects.toThrow();
      await vi.waitFor(() => expect(outUi.output()).toContain('failed verification'), { timeout: 10_000 });
      const line = outUi
        .output()
        .split('\n')
        .find((text) => text.includes('failed verification'))!;
      expect(JSON.parse(line)).toMatchObject({ digest: model.digest, path: 'model.txt' });
      expect(line).not.toContain(token);
    } finally {
      await writeFile(blob, kept);
    }
  } finally {
    expect(await outUi.stop('SIGINT')).toBe(0);
  }
}, 120_000);

test("local runs record the branch checked out, and the runs list filters by it; a detached HEAD's run has none", async () => {
  await project.git('checkout', '-q', '-b', 'feature/wider');
  const onBranch = await runCli(['run', 'epochs=5', '--json'], { cwd: project.dir });
  expect(onBranch.code, onBranch.stderr).toBe(0);
  await project.git('checkout', '-q', '--detach');
  const detached = await runCli(['run', 'epochs=6', '--json'], { cwd: project.dir });
  expect(detached.code, detached.stderr).toBe(0);
  await project.git('checkout', '-q', 'main');
  const idOf = (stdout: string) => (JSON.parse(stdout) as { run: { id: string } }).run.id;

  const listUi = spawnFluksio(['ui', '--no-open', '--json'], { cwd: project.dir });
  try {
    const { url } = JSON.parse(await listUi.waitFor(/"url"/, 60_000)) as { url: string };
    const address = new URL(url);
    const list = async (branch: string) => {
      const answer = await fetch(
        `${address.origin}/pages/api/runs?branch=${encodeURIComponent(branch)}&token=${address.searchParams.get('token')}`,
      );
      expect(answer.status).toBe(200);
      return ((await answer.json()) as { runs: { id: string; branch: string | null }[] }).runs;
    };
    expect(await list('feature/wider')).toEqual([
      expect.objectContaining({ id: idOf(onBranch.stdout), branch: 'feature/wider' }),
    ]);
    const onMain = await list('main');
    expect(onMain.length).toBeGreaterThan(0);
    expect(onMain.map((run) => run.id)).not.toContain(idOf(onBranch.stdout));
    expect(onMain.map((run) => run.id)).not.toContain(idOf(detached.stdout));
  } finally {
    expect(await listUi.stop('SIGINT')).toBe(0);
  }
}, 120_000);

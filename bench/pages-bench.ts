import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { pino } from 'pino';
import { readControlPlaneSettings } from '../app/control-plane-settings.js';
import { hashToken } from '../app/http/hash-token.js';
import { openControlPlaneDatabase } from '../app/open-control-plane-database.js';
import { PageLinkSigner } from '../app/pages/page-link-signer.js';
import { startControlPlane } from '../app/start-control-plane.js';
import { createApiToken } from '../store/tokens/create-api-token.js';
import { createRunner } from '../store/runners/create-runner.js';
import type { Params } from '../core/params/resolve-params.js';
import { makeRepo } from '../test/helpers/make-repo.js';
import { ranAsClaimed } from '../test/helpers/ran-as-claimed.js';
import { exited, fluksio, lineOf } from './fluksio-command.js';
import { ms, percentile } from './measure.js';
import { openScratchEnvironment, REDIS_URL } from './scratch-environment.js';

const LOG_LINES = 100_000;
const SERIES = 10;
const POINTS = 10_000;
const SEARCH_LINES = 1_000_000;
const LIVE_SAMPLES = 20;
const SECRET = randomBytes(32).toString('hex');

/**
 * The run pages in Debian's Chromium. On a control plane: a run with 100,000 log lines
 * and 10 series of 10,000 points (time to first byte, to the page usable, to the first
 * log lines, and from the data's arrival to the charts drawn), a search over a run's
 * 1,000,000 log lines, and the live latency from a runner's log event to the line on the
 * page. Locally: the live latency from a stage's `print` to the line on the page of
 * `fluksio ui`, across `fluksio run`'s live log and the journal.
 */
export async function benchPages(): Promise<void> {
  const browser = await chromium.launch({
    executablePath: process.env.FLUKSIO_BENCH_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    await benchControlPlanePages(browser);
    await benchLocalLiveLog(browser);
  } finally {
    await browser.close();
  }
}

async function benchControlPlanePages(browser: Browser): Promise<void> {
  const scratch = await openScratchEnvironment('pages');
  const settings = readControlPlaneSettings({
    DATABASE_URL: scratch.databaseUrl,
    REDIS_URL,
    FLUKSIO_QUEUE_PREFIX: scratch.prefix,
    FLUKSIO_DATA_DIR: scratch.dataDir,
    FLUKSIO_PAGES_SECRET: SECRET,
    // No heartbeats here: the simulated runner's lease must outlast the whole measurement.
    FLUKSIO_LEASE_TTL: '10m',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
  });
  const plane = await startControlPlane({ settings, logger: pino({ level: 'warn' }) });
  const database = await openControlPlaneDatabase(settings, pino({ level: 'warn' }));
  try {
    const submitToken = randomBytes(32).toString('hex');
    const runnerToken = randomBytes(32).toString('hex');
    await createApiToken({
      db: database.db,
      name: 'bench',
      repositories: ['bench/model'],
      scope: 'submit',
      tokenHash: hashToken(submitToken),
    });
    await createRunner({
      db: database.db,
      name: 'bench',
      owner: 'bench',
      repositories: [],
      labels: [],
      tokenHash: hashToken(runnerToken),
    });
    const post = async (path: string, token: string, body: unknown, headers: Record<string, string> = {}) => {
      const response = await fetch(`${plane.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 400) throw new Error(`${path} answered ${response.status}: ${text}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : null;
    };
    /** A run submitted, claimed and started as a runner would, and a way to send its events. */
    const startRun = async (key: string) => {
      await post(
        '/api/v1/runs',
        submitToken,
        { repository: 'bench/model', commit: 'b'.repeat(40) },
        { 'idempotency-key': key },
      );
      const claim = (await post('/api/v1/runner/claim', runnerToken, { waitSeconds: 0 })) as {
        lease: string;
        run: { id: string; params: Params };
      };
      const runId = claim.run.id;
      await post(`/api/v1/runs/${runId}/start`, runnerToken, {
        lease: claim.lease,
        codeDigest: 'd'.repeat(64),
        envDigest: 'd'.repeat(64),
        ...ranAsClaimed(claim),
      });
      let seq = 0;
      const events = (batch: unknown[]) =>
        post(`/api/v1/runs/${runId}/events`, runnerToken, {
          lease: claim.lease,
          attempt: 1,
          events: batch.map((event) => ({ ...(event as object), seq: seq++ })),
        });
      const log = async (stage: string, count: number) => {
        await events([{ type: 'stage.started', stage, at: new Date().toISOString() }]);
        for (let from = 0; from < count; from += 10_000) {
          const lines = Array.from(
            { length: 10_000 },
            (_, i) => `step ${from + i} \u001b[32mloss\u001b[0m=${Math.random().toFixed(6)}`,
          );
          await events([{ type: 'stage.log', stage, lines }]);
        }
      };
      return { runId, lease: claim.lease, events, log };
    };
    const link = new PageLinkSigner(Buffer.from(SECRET), 3_600_000).sign('bench/model');

    // A run still running: the page loads, draws, then follows the live log.
    const live = await startRun('bench');
    await live.log('train', LOG_LINES);
    for (let series = 0; series < SERIES; series += 1) {
      const start = Date.now();
      const points = Array.from({ length: POINTS }, (_, step) => ({
        stage: 'train',
        name: `m${series}`,
        step,
        value: Math.exp(-step / 3000) + Math.random() * 0.01,
        at: start + step * 100,
      }));
      await live.events([{ type: 'metric.points', points }]);
    }
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${plane.url}/runs/${live.runId}?${link}`);
    await page
      .locator(`figure[data-points="${POINTS}"]`)
      .nth(SERIES - 1)
      .waitFor({ timeout: 120_000 });
    await page.locator(`#log-train[data-lines="${LOG_LINES}"]`).waitFor({ timeout: 120_000 });
    const timing = await marks(page);
    const drawn = await page.locator('figure.chart').first().getAttribute('data-drawn');
    console.log(
      `\npages: a run with ${LOG_LINES.toLocaleString('en')} log lines and ${SERIES} series of ${POINTS.toLocaleString('en')} points, in Chromium`,
    );
    console.log(`  time to first byte                ${ms(timing.ttfb)}`);
    console.log(`  page usable (data fetched)        ${ms(timing.data)}   (target < 1 s)`);
    if (timing.script && timing.request)
      console.log(
        `    of which: the bundle loaded by ${ms(timing.script.end)}; the data asked at ${ms(timing.request.start)}, answered in ${ms(timing.request.server)} (${(timing.request.bytes / 1024).toFixed(0)} KiB), received by ${ms(timing.request.end)}`,
      );
    console.log(
      `  charts drawn after the data       ${ms(timing.charts - timing.data)}   (target < 100 ms; ${drawn} of a series' ${POINTS.toLocaleString('en')} points drawn, cut down on the server to the chart's width)`,
    );
    console.log(`  first log lines on the page       ${ms(timing.log)}`);
    console.log(
      `  whole log in the page             ${ms(timing.now)}   (windowed: the DOM holds the lines on screen)`,
    );

    const latencies: number[] = [];
    for (let i = 0; i < LIVE_SAMPLES; i += 1) {
      const marker = `live-${i}-${randomBytes(4).toString('hex')}`;
      const started = performance.now();
      await live.events([{ type: 'stage.log', stage: 'train', lines: [marker] }]);
      // The view follows the end of a live log, as a terminal does: the new line is drawn.
      await page
        .locator('#log-train li', { hasText: marker })
        .waitFor({ state: 'attached', timeout: 20_000 });
      latencies.push(performance.now() - started);
    }
    console.log(
      `  live: runner's log event → line on the page  p50 ${ms(percentile(latencies, 50))} · p95 ${ms(percentile(latencies, 95))}   (target p95 < 500 ms)`,
    );
    await page.context().close();

    // Search: a finished run whose stage printed a million lines.
    const long = await startRun('bench-search');
    await long.log('train', SEARCH_LINES);
    const searchPage = await (await browser.newContext()).newPage();
    await searchPage.goto(`${plane.url}/runs/${long.runId}?${link}`);
    await searchPage.locator(`#log-train[data-lines="${SEARCH_LINES}"]`).waitFor({ timeout: 600_000 });
    const loaded = await marks(searchPage);
    const box = searchPage.getByRole('searchbox', { name: 'Search the log of train' });
    const searchMs = async (query: string): Promise<{ ms: number; matches: string }> => {
      await box.fill('');
      await box.fill(query);
      const log = searchPage.locator('#log-train');
      return {
        ms: Number(await log.getAttribute('data-search-ms')),
        matches: (await log.getAttribute('data-matches')) ?? '?',
      };
    };
    const rare = await searchMs(`step ${SEARCH_LINES - 10} `);
    const common = await searchMs('LOSS=0.5');
    console.log(
      `  ${SEARCH_LINES.toLocaleString('en')} log lines reached the page in ${ms(loaded.now)}; search over them (the page's store, case-insensitive):`,
    );
    console.log(`    a line near the end (${rare.matches} match)       ${ms(rare.ms)}   (target < 200 ms)`);
    console.log(
      `    a term on a tenth of the lines (${common.matches} matches)  ${ms(common.ms)}   (target < 200 ms)`,
    );
    await searchPage.context().close();
  } finally {
    await database.close();
    await plane.close();
    await scratch.close();
  }
}

/** The navigation's and the page's performance marks, and the time now, in ms since navigation. */
async function marks(page: Page) {
  return page.evaluate(() => {
    const g = globalThis as unknown as {
      performance: {
        getEntriesByType(t: string): {
          responseStart: number;
          responseEnd: number;
          requestStart: number;
          name: string;
          startTime: number;
          encodedBodySize: number;
        }[];
        now(): number;
      };
    };
    const [navigation] = g.performance.getEntriesByType('navigation');
    const found = Object.fromEntries(
      g.performance.getEntriesByType('mark').map((mark) => [mark.name, mark.startTime]),
    );
    const resources = g.performance.getEntriesByType('resource');
    const script = resources.find((entry) => entry.name.includes('/pages/assets/pages.js'));
    const data = resources.find((entry) => /\/pages\/api\/runs\/[^/?]+\?/.test(entry.name));
    return {
      script: script ? { start: script.startTime, end: script.responseEnd } : null,
      request: data
        ? {
            start: data.startTime,
            server: data.responseStart - data.requestStart,
            end: data.responseEnd,
            bytes: data.encodedBodySize,
          }
        : null,
      ttfb: navigation!.responseStart,
      data: found['fluksio:data'] ?? NaN,
      charts: found['fluksio:charts'] ?? NaN,
      log: found['fluksio:log'] ?? NaN,
      now: g.performance.now(),
    };
  });
}

/**
 * A real `fluksio run` whose stage prints a line with the time it printed it every 250 ms
 * while `fluksio ui` shows the run: the page notes when each line first appears in its
 * DOM (both clocks are this machine's).
 */
async function benchLocalLiveLog(browser: Browser): Promise<void> {
  const signals = await mkdtemp(join(tmpdir(), 'fluksio-bench-live-'));
  const go = join(signals, 'go');
  const repo = await makeRepo({
    files: {
      'fluksio.yml': `version: 1
env: [BENCH_GO]
stages:
  live:
    cmd: python3 live.py
    deps: [live.py]
    cache: false
`,
      'live.py': `import os, time
print("waiting for the page", flush=True)
deadline = time.time() + 300
while not os.path.exists(os.environ["BENCH_GO"]) and time.time() < deadline:
    time.sleep(0.05)
for i in range(${LIVE_SAMPLES}):
    time.sleep(0.25)
    print(f"printed-at {int(time.time() * 1000)}", flush=True)
`,
    },
  });
  const run = fluksio(['run'], repo.dir, { BENCH_GO: go });
  let ui: ReturnType<typeof fluksio> | null = null;
  try {
    // The stage has started once the run writes its live log.
    const liveDir = join(repo.dir, '.fluksio', 'live');
    for (let waited = 0; (await readdir(liveDir).catch(() => [])).length === 0; waited += 50) {
      if (waited > 120_000 || run.exitCode !== null) throw new Error('the local run did not start its stage');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // `fluksio ui` shows the newest run: wait until the run's journal has made it one.
    let url = '';
    for (let attempt = 0; attempt < 60 && !url; attempt += 1) {
      ui = fluksio(['ui', '--no-open', '--json'], repo.dir, {});
      url = await lineOf(ui, /"url":"([^"]+)"/)
        .then((match) => match[1]!)
        .catch(() => '');
    }
    const page = await (await browser.newContext()).newPage();
    await page.goto(url);
    await page.locator('#log-live li', { hasText: 'waiting for the page' }).waitFor({ timeout: 120_000 });
    await page.evaluate(() => {
      const g = globalThis as unknown as {
        latencies: number[];
        document: { getElementById(id: string): unknown };
        MutationObserver: new (callback: () => void) => { observe(node: unknown, options: object): void };
      };
      const seen = new Set<string>();
      g.latencies = [];
      const log = g.document.getElementById('log-live') as {
        querySelectorAll(selector: string): Iterable<{ textContent: string | null }>;
      };
      new g.MutationObserver(() => {
        const now = Date.now();
        for (const item of log.querySelectorAll('li .lt')) {
          const printed = /^printed-at (\d+)$/.exec(item.textContent ?? '');
          if (!printed || seen.has(printed[1]!)) continue;
          seen.add(printed[1]!);
          g.latencies.push(now - Number(printed[1]));
        }
      }).observe(log, { childList: true, subtree: true });
    });
    await writeFile(go, '');
    await page.locator('#log-live[data-complete="true"]').waitFor({ timeout: 120_000 });
    const latencies = (await page.evaluate(
      () => (globalThis as unknown as { latencies: number[] }).latencies,
    )) as number[];
    console.log(
      `\npages, local (fluksio run + fluksio ui): a stage's print → the line on the page, ${latencies.length} lines  p50 ${ms(percentile(latencies, 50))} · p95 ${ms(percentile(latencies, 95))}   (target p95 < 500 ms)`,
    );
    await page.context().close();
  } finally {
    ui?.kill('SIGINT');
    run.kill('SIGINT');
    await Promise.all([exited(ui), exited(run)]);
    await repo.cleanup();
    await rm(signals, { recursive: true, force: true });
  }
}

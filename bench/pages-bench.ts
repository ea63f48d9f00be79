import { randomBytes } from 'node:crypto';
import { chromium } from 'playwright-core';
import { pino } from 'pino';
import { readControlPlaneSettings } from '../app/control-plane-settings.js';
import { hashToken } from '../app/http/hash-token.js';
import { openControlPlaneDatabase } from '../app/open-control-plane-database.js';
import { PageLinkSigner } from '../app/pages/page-link-signer.js';
import { startControlPlane } from '../app/start-control-plane.js';
import { createApiToken } from '../store/create-api-token.js';
import { createRunner } from '../store/create-runner.js';
import { ms, percentile } from './measure.js';
import { openScratchEnvironment, REDIS_URL } from './scratch-environment.js';

const LOG_LINES = 100_000;
const SERIES = 10;
const POINTS = 10_000;
const LIVE_SAMPLES = 5;
const SECRET = randomBytes(32).toString('hex');

/**
 * The run page in Debian's Chromium against a control plane: a run with 100,000 log lines
 * and 10 series of 10,000 points (time to first byte, to the page usable, and from the
 * data's arrival to the charts drawn), a search over its log, and the live latency from
 * a runner's log event to the line on the page.
 */
export async function benchPages(): Promise<void> {
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
    await post(
      '/api/v1/runs',
      submitToken,
      { repository: 'bench/model', commit: 'b'.repeat(40) },
      { 'idempotency-key': 'bench' },
    );
    const claim = (await post('/api/v1/runner/claim', runnerToken, { waitSeconds: 0 })) as {
      lease: string;
      run: { id: string };
    };
    const runId = claim.run.id;
    await post(`/api/v1/runs/${runId}/start`, runnerToken, {
      lease: claim.lease,
      codeDigest: 'd'.repeat(64),
      envDigest: 'd'.repeat(64),
    });
    let seq = 0;
    const events = (batch: unknown[]) =>
      post(`/api/v1/runs/${runId}/events`, runnerToken, {
        lease: claim.lease,
        attempt: 1,
        events: batch.map((event) => ({ ...(event as object), seq: seq++ })),
      });
    await events([{ type: 'stage.started', stage: 'train', at: new Date().toISOString() }]);
    for (let from = 0; from < LOG_LINES; from += 10_000) {
      const lines = Array.from(
        { length: 10_000 },
        (_, i) => `step ${from + i} \u001b[32mloss\u001b[0m=${Math.random().toFixed(6)}`,
      );
      await events([{ type: 'stage.log', stage: 'train', lines }]);
    }
    for (let series = 0; series < SERIES; series += 1) {
      const points = Array.from({ length: POINTS }, (_, step) => ({
        stage: 'train',
        name: `m${series}`,
        step,
        value: Math.exp(-step / 3000) + Math.random() * 0.01,
      }));
      await events([{ type: 'metric.points', points }]);
    }
    const link = new PageLinkSigner(Buffer.from(SECRET), 3_600_000).sign('bench/model');
    const page = await (await browser.newContext()).newPage();

    // A run still running: the page loads, draws, then follows the live log.
    await page.goto(`${plane.url}/runs/${runId}?${link}`);
    await page
      .locator(`figure[data-points="${POINTS}"]`)
      .nth(SERIES - 1)
      .waitFor({ timeout: 120_000 });
    await page
      .locator('#log-train li')
      .nth(LOG_LINES - 1)
      .waitFor({ timeout: 120_000 });
    const timing = await page.evaluate(() => {
      const g = globalThis as unknown as {
        performance: {
          getEntriesByType(t: string): { responseStart: number; name: string; startTime: number }[];
          now(): number;
        };
      };
      const [navigation] = g.performance.getEntriesByType('navigation');
      const marks = Object.fromEntries(
        g.performance.getEntriesByType('mark').map((mark) => [mark.name, mark.startTime]),
      );
      return {
        ttfb: navigation!.responseStart,
        data: marks['fluksio:data']!,
        charts: marks['fluksio:charts']!,
        logged: g.performance.now(),
      };
    });
    console.log(
      `\npages: a run with ${LOG_LINES.toLocaleString('en')} log lines and ${SERIES} series of ${POINTS.toLocaleString('en')} points, in Chromium`,
    );
    console.log(`  time to first byte                ${ms(timing.ttfb)}`);
    console.log(`  page usable (data fetched)        ${ms(timing.data)}   (target < 1 s)`);
    console.log(`  charts drawn after the data       ${ms(timing.charts - timing.data)}   (target < 100 ms)`);
    console.log(`  whole log shown                   ${ms(timing.logged)}`);

    await page.getByRole('searchbox', { name: 'Search the log of train' }).fill('step 99999');
    const searchMs = Number(await page.locator('#log-train').getAttribute('data-search-ms'));
    console.log(
      `  search over ${LOG_LINES.toLocaleString('en')} lines             ${ms(searchMs)}   (target < 200 ms over 1,000,000: not measured, the page keeps every line in the DOM)`,
    );

    const latencies: number[] = [];
    for (let i = 0; i < LIVE_SAMPLES; i += 1) {
      const marker = `live-${i}-${randomBytes(4).toString('hex')}`;
      const started = performance.now();
      await events([{ type: 'stage.log', stage: 'train', lines: [marker] }]);
      // Attached, not visible: the search above still filters the list.
      const shown = await page
        .locator('#log-train li', { hasText: marker })
        .waitFor({ state: 'attached', timeout: 20_000 })
        .then(() => true)
        .catch(() => false);
      if (!shown) {
        console.log(
          `  live: a line did not reach the page within 20 s (the log stream re-reads all ${LOG_LINES.toLocaleString('en')} lines per poll)`,
        );
        return;
      }
      latencies.push(performance.now() - started);
    }
    console.log(
      `  live: runner's log event → line on the page  p50 ${ms(percentile(latencies, 50))} · p95 ${ms(percentile(latencies, 95))}   (target p95 < 500 ms; from the runner's upload, not the stage's print)`,
    );
  } finally {
    await browser.close();
    await database.close();
    await plane.close();
    await scratch.close();
  }
}

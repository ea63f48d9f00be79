import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { sql } from 'drizzle-orm';
import { expect, test } from 'vitest';
import { waitFor } from '../app-github/github-app-fixture.js';
import { DrivenRun, finishedStage, pageLinks, usePageWorld } from './page-world.js';

const world = usePageWorld();

const lossPoints = (from: number, to: number, spikeAt = -1) =>
  Array.from({ length: to - from }, (_, i) => from + i).map((step) => ({
    stage: 'train',
    name: 'loss',
    step,
    value: step === spikeAt ? 50 : 1 / (step + 1),
  }));

/** A run whose stage streamed `count` loss points, sent as a runner sends them. */
async function runWithPoints(count: number, spikeAt = -1): Promise<DrivenRun> {
  const run = await DrivenRun.start(world.plane, world);
  await run.events({ type: 'stage.started', stage: 'train', at: new Date().toISOString() });
  for (let from = 0; from < count; from += 2000) {
    await run.events({
      type: 'metric.points',
      points: lossPoints(from, Math.min(count, from + 2000), spikeAt),
    });
  }
  return run;
}

interface SeriesJson {
  points: { step: number; value: number }[];
  total?: number;
}

/** A server-sent event stream read with fetch, an event at a time. */
async function openStream(path: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const response = await fetch(`${world.plane.url}${path}`, {
    headers: { authorization: `Bearer ${world.submitter}`, ...headers },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    async next(): Promise<{ event: string; id: string | null; data: Record<string, unknown> }> {
      for (;;) {
        const cut = buffer.indexOf('\n\n');
        if (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const field = (name: string) =>
            block
              .split('\n')
              .find((line) => line.startsWith(`${name}: `))
              ?.slice(name.length + 2) ?? null;
          const event = field('event');
          if (event === null) continue;
          return {
            event,
            id: field('id'),
            data: JSON.parse(field('data') ?? '{}') as Record<string, unknown>,
          };
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += value;
      }
    },
    close: () => controller.abort(),
  };
}

const stepsOf = (data: Record<string, unknown>, name: string) =>
  ((data.series as Record<string, SeriesJson>)[name]?.points ?? []).map((point) => point.step);

test("the run page's data carries series cut down to the chart's width; a range comes at full resolution", async () => {
  const run = await runWithPoints(5000, 3333);
  const whole = await world.plane.call('GET', `/pages/api/runs/${run.id}`, { token: world.submitter });
  expect((whole.json.series as Record<string, SeriesJson>).loss!.points).toHaveLength(5000);

  const cut = await world.plane.call('GET', `/pages/api/runs/${run.id}?buckets=100`, {
    token: world.submitter,
  });
  const loss = (cut.json.series as Record<string, SeriesJson>).loss!;
  expect(loss.total).toBe(5000);
  expect(loss.points.length).toBeLessThanOrEqual(202);
  expect(loss.points[0]!.step).toBe(0);
  expect(loss.points.at(-1)!.step).toBe(4999);
  // The spike of one step is drawn as high as it went.
  expect(loss.points.find((point) => point.step === 3333)?.value).toBe(50);

  const range = await world.plane.call(
    'GET',
    `/pages/api/runs/${run.id}/series?name=loss&from=1000&to=1099&buckets=100`,
    { token: world.submitter },
  );
  expect(range.status).toBe(200);
  expect((range.json.series as SeriesJson).points.map((point) => point.step)).toEqual(
    Array.from({ length: 100 }, (_, i) => 1000 + i),
  );
  expect(range.json.baseline).toBeNull();

  const tiny = await world.plane.call('GET', `/pages/api/runs/${run.id}?buckets=3`, {
    token: world.submitter,
  });
  expect(tiny.status).toBe(400);
  expect(tiny.text).toContain('at least 16 pixels');
  const other = await world.plane.addApiToken({ repositories: ['acme/other'] });
  const hidden = await world.plane.call(
    'GET',
    `/pages/api/runs/${run.id}/series?name=loss&from=0&to=9&buckets=100`,
    { token: other },
  );
  expect(hidden.status).toBe(404);
});

test('the live stream pushes only new points, and one resumed from its last id sends each point once', async () => {
  const run = await runWithPoints(10);
  const live = await openStream(`/pages/api/runs/${run.id}/live?buckets=100&after=loss:9`);
  const first = await live.next();
  expect(first.event).toBe('update');
  expect(first.data.partial).toBe(true);
  expect(stepsOf(first.data, 'loss')).toEqual([]);
  expect((first.data.report as { run: { status: string } }).run.status).toBe('running');

  await run.events({ type: 'metric.points', points: lossPoints(10, 15) });
  let update = await live.next();
  expect(stepsOf(update.data, 'loss')).toEqual([10, 11, 12, 13, 14]);
  expect(update.id).toBe('loss:14');
  live.close();

  // Points sent while the page was away come once the stream resumes from the id it last had.
  await run.events({ type: 'metric.points', points: lossPoints(15, 20) });
  const resumed = await openStream(`/pages/api/runs/${run.id}/live?buckets=100&after=loss:9`, {
    'last-event-id': update.id!,
  });
  update = await resumed.next();
  expect(stepsOf(update.data, 'loss')).toEqual([15, 16, 17, 18, 19]);

  await run.events({ type: 'stage.finished', stage: finishedStage('train') });
  await run.finish('succeeded', { loss: 0.05 });
  for (;;) {
    update = await resumed.next();
    if (update.event === 'end') break;
    expect(update.event).toBe('update');
    expect(stepsOf(update.data, 'loss')).toEqual([]);
  }
  resumed.close();
});

test('a chart drawn from a cut-down series zooms into a dragged range at full resolution, and back out on a double click', async () => {
  const run = await runWithPoints(5000);
  await world.page.goto(`${world.plane.url}/runs/${run.id}?${pageLinks.sign('acme/model')}`);
  const chart = world.page.locator('figure[data-metric="loss"][data-points="5000"]');
  await chart.waitFor();
  const overview = Number(await chart.getAttribute('data-drawn'));
  expect(overview).toBeLessThan(5000);
  expect(overview).toBeGreaterThan(500);

  const over = chart.locator('.u-over');
  const box = (await over.boundingBox())!;
  await world.page.mouse.move(box.x + box.width * 0.2, box.y + box.height / 2);
  await world.page.mouse.down();
  await world.page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2, { steps: 5 });
  await world.page.mouse.up();
  const zoomed = world.page.locator('figure[data-metric="loss"][data-zoomed]');
  await zoomed.waitFor();
  const [from, to] = (await zoomed.getAttribute('data-zoomed'))!.split('-').map(Number) as [number, number];
  // About a tenth of the run, every step of it.
  expect(to - from).toBeGreaterThan(300);
  expect(to - from).toBeLessThan(700);
  expect(Number(await zoomed.getAttribute('data-drawn'))).toBe(to - from + 1);
  await world.browser.screenshot(world.page, 'run-page-zoomed');

  await over.dblclick();
  await world.page.locator('figure[data-metric="loss"]:not([data-zoomed])').waitFor();
  expect(Number(await chart.getAttribute('data-drawn'))).toBe(overview);
});

/** A running run whose stage `train` holds `count` loss points, written straight to the database. */
async function runWithStoredPoints(count: number): Promise<DrivenRun> {
  const run = await DrivenRun.start(world.plane, world);
  await run.events({ type: 'stage.started', stage: 'train', at: new Date().toISOString() });
  await world.database.db.execute(sql`
    insert into metric_points (run_id, stage, name, step, value)
    select ${run.id}, 'train', 'loss', step, 1.0 / (step + 1) from generate_series(0, ${count - 1}) as step`);
  return run;
}

test('a page that holds nothing, or holds steps long past, gets the cut-down page, never every point of the run', async () => {
  const total = 200_000;
  const run = await runWithStoredPoints(total);
  const get = (query: string) =>
    world.plane.call('GET', `/pages/api/runs/${run.id}${query}`, { token: world.submitter });
  const lossOf = (data: Record<string, unknown>) => (data.series as Record<string, SeriesJson>).loss!;

  for (const [query, buckets] of [
    ['?after=', 560],
    ['?after=&buckets=16', 16],
    ['?after=loss:10&buckets=16', 16],
  ] as const) {
    const answer = await get(query);
    expect(answer.status, query).toBe(200);
    expect(answer.json.partial, query).toBeFalsy();
    expect(lossOf(answer.json).total, query).toBe(total);
    expect(lossOf(answer.json).points.length, query).toBeLessThanOrEqual(2 * buckets);
    expect(lossOf(answer.json).points.at(-1)!.step, query).toBe(total - 1);
  }
  // Held up to a few steps before the end: only those.
  const near = await get(`?after=loss:${total - 5}&buckets=16`);
  expect(near.json.partial).toBe(true);
  expect(stepsOf(near.json, 'loss')).toEqual([total - 4, total - 3, total - 2, total - 1]);

  for (const query of ['?buckets=16', '?buckets=16&after=']) {
    const live = await openStream(`/pages/api/runs/${run.id}/live${query}`);
    const first = await live.next();
    expect(first.event, query).toBe('update');
    expect(first.data.partial, query).toBeFalsy();
    expect(lossOf(first.data).points.length, query).toBeLessThanOrEqual(32);
    expect(first.id, query).toBe(`loss:${total - 1}`);
    live.close();
  }

  // More new points than twice the width come as the whole page again, cut down.
  const live = await openStream(`/pages/api/runs/${run.id}/live?buckets=16&after=loss:${total - 1}`);
  expect(stepsOf((await live.next()).data, 'loss')).toEqual([]);
  await run.events({ type: 'metric.points', points: lossPoints(total, total + 100) });
  const update = await live.next();
  expect(update.data.partial).toBeFalsy();
  expect(lossOf(update.data).points.length).toBeLessThanOrEqual(32);
  expect(lossOf(update.data).points.at(-1)!.step).toBe(total + 99);
  live.close();
});

test('a live stream whose client stops reading and leaves ends while the server waits for it, and gives back its wait', async () => {
  const run = await DrivenRun.start(world.plane, world);
  await run.events({ type: 'stage.started', stage: 'train', at: new Date().toISOString() });
  // About 40 MB of log, more than the sockets' buffers hold.
  await world.database.db.execute(sql`
    insert into log_lines (run_id, attempt, stage, seq, lines)
    select ${run.id}, 1, 'train', seq, array_fill(repeat('x', 200), array[100])
    from generate_series(0, 1999) as seq`);
  const waiting = async () =>
    /^fluksio_live_streams_waiting (\d+)$/m.exec((await world.plane.call('GET', '/metrics')).text)?.[1];
  expect(await waiting()).toBe('0');

  let response: ServerResponse | null = null;
  world.plane.server.server.on('request', (request, answer: ServerResponse) => {
    if (request.url?.includes('/logs/train')) response = answer;
  });
  const { hostname, port } = new URL(world.plane.url);
  const socket = connect({ host: hostname, port: Number(port) });
  socket.pause();
  socket.write(
    `GET /pages/api/runs/${run.id}/logs/train HTTP/1.1\r\nhost: ${hostname}\r\n` +
      `authorization: Bearer ${world.submitter}\r\n\r\n`,
  );
  // The server filled what the connection holds, and waits for the client to take some.
  await waitFor('the log stream to wait for its reader', () => response?.writableNeedDrain === true);
  expect(await waiting()).toBe('1');
  socket.destroy();
  await waitFor('the stream to end', () => response?.writableFinished === true || response?.destroyed);
  await waitFor('the stream to give back its wait', async () => (await waiting()) === '0');
});

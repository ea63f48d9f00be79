import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { resetTables, startTestControlPlane, type TestControlPlane } from '../app/control-plane-harness.js';
import { launchChromium, type TestBrowser } from '../helpers/chromium.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-database.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';
import { DrivenRun, finishedStage, pageLinks, PAGES_SECRET } from './page-world.js';

let database: TestDatabase;
let browser: TestBrowser;
let plane: TestControlPlane | undefined;
let s3: TestS3 | undefined;
/** What the control plane logged, a JSON object a line. */
let logged: Record<string, unknown>[];

beforeAll(async () => {
  [database, browser] = await Promise.all([createTestDatabase(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  await database?.close();
});
beforeEach(async () => {
  await resetTables(database.db);
  logged = [];
});
afterEach(async () => {
  await plane?.close();
  await s3?.close();
  plane = undefined;
  s3 = undefined;
});

/** A control plane keeping blobs in a directory, or in S3 (s3rver) with `store: 's3'`, whose log the test reads. */
async function startPlane(store: 'directory' | 's3'): Promise<TestControlPlane> {
  if (store === 's3') s3 = await startTestS3();
  const logs = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split('\n').filter(Boolean))
        logged.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  plane = await startTestControlPlane({
    db: database.db,
    env: { FLUKSIO_PAGES_SECRET: PAGES_SECRET, ...s3?.env },
    logger: pino({ level: 'warn' }, logs),
  });
  return plane;
}

const digestOf = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

/** Uploads `bytes` as the run's runner does, through the control plane or to S3 with a presigned URL. */
async function upload(run: DrivenRun, runnerToken: string, bytes: Buffer): Promise<string> {
  const digest = digestOf(bytes);
  const headers = { 'x-fluksio-lease': run.claim.lease, 'x-fluksio-run': run.id };
  if (!s3) {
    const put = await plane!.call('PUT', `/api/v1/blobs/${digest}`, {
      token: runnerToken,
      headers,
      body: bytes,
    });
    expect(put.status, put.text).toBe(201);
    return digest;
  }
  const size = bytes.length;
  const ticket = await plane!.call('POST', `/api/v1/blobs/${digest}/uploads`, {
    token: runnerToken,
    headers,
    json: { size },
  });
  expect(ticket.status, ticket.text).toBe(201);
  const {
    url,
    headers: putHeaders,
    uploadId,
  } = ticket.json as {
    url: string;
    headers: Record<string, string>;
    uploadId: string;
  };
  const put = await fetch(url, {
    method: 'PUT',
    headers: { ...putHeaders, 'content-length': String(size) },
    body: bytes,
  });
  expect(put.status).toBeLessThan(300);
  const finish = await plane!.call('POST', `/api/v1/blobs/${digest}/uploads/${uploadId}`, {
    token: runnerToken,
    headers,
    json: { size },
  });
  expect(finish.status, finish.text).toBe(201);
  return digest;
}

/**
 * A finished run of acme/model whose `train` stage stored `models/model.bin` (1.5 MiB: many
 * chunks) and `notes.txt` (one chunk); `missingDigest` is of bytes never uploaded, which no
 * stage may name (the events route refuses it: unheld-outs.test.ts).
 */
async function runWithOutputs(plane: TestControlPlane) {
  const submitter = await plane.addApiToken({ repositories: ['acme/model'] });
  const runnerToken = (await plane.addRunner({ name: `r-${randomBytes(3).toString('hex')}`, owner: 'acme' }))
    .token;
  const run = await DrivenRun.start(plane, { submitter, runnerToken });
  const model = randomBytes(1536 * 1024);
  const notes = Buffer.from('lr=0.1 loss=0.25\n');
  const [modelDigest, notesDigest] = [
    await upload(run, runnerToken, model),
    await upload(run, runnerToken, notes),
  ];
  const missing = Buffer.from('never uploaded');
  await run.events({
    type: 'stage.finished',
    stage: finishedStage('train', {
      outs: [
        {
          path: 'models/model.bin',
          kind: 'file',
          digest: modelDigest as `sha256:${string}`,
          size: model.length,
        },
        {
          path: 'notes "v1".txt',
          kind: 'file',
          digest: notesDigest as `sha256:${string}`,
          size: notes.length,
        },
      ],
    }),
  });
  await run.finish('succeeded', { loss: 0.25 });
  const link = pageLinks.sign('acme/model');
  const outUrl = (digest: string) => `${plane.url}/pages/api/runs/${run.id}/outs/${digest}?${link}`;
  return { run, model, notes, modelDigest, notesDigest, missingDigest: digestOf(missing), link, outUrl };
}

/** Downloads by clicking the run page's link for `out`, as a person would; the saved bytes, or the failure. */
async function clickDownload(runPage: string, out: string) {
  const page = await browser.newPage();
  try {
    await page.goto(runPage);
    const link = page.locator(`tr[data-out="${out}"] a.download`);
    await link.waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    const failure = await download.failure();
    return {
      name: download.suggestedFilename(),
      failure,
      bytes: failure === null ? await readFile(await download.path()) : null,
      page,
    };
  } catch (error) {
    await page.context().close();
    throw error;
  }
}

/** Flips one byte of the blob `digest` where the store keeps it, keeping its size. */
async function corrupt(digest: string, bytes: Buffer): Promise<void> {
  const hex = digest.slice('sha256:'.length);
  const flipped = Buffer.from(bytes);
  flipped.writeUInt8(flipped.readUInt8(flipped.length - 1) ^ 0xff, flipped.length - 1);
  if (s3) await s3.write(`sha256/${hex}`, flipped);
  else await writeFile(path.join(plane!.blobsRoot, 'sha256', hex.slice(0, 2), hex), flipped);
}

const corruptionsLogged = () =>
  logged.filter((line) => String(line.msg).includes('failed verification')).map((line) => line.digest);

for (const store of ['directory', 's3'] as const) {
  test(`fluksio app (${store} store): the run page lists each output with digest and size; its download is the output's bytes, named after it`, async () => {
    const started = await startPlane(store);
    const { run, model, notes, modelDigest, notesDigest, missingDigest, link, outUrl } =
      await runWithOutputs(started);

    const answer = await fetch(outUrl(notesDigest));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-length')).toBe(String(notes.length));
    expect(answer.headers.get('content-disposition')).toBe(
      `attachment; filename="notes _v1_.txt"; filename*=UTF-8''notes%20%22v1%22.txt`,
    );
    expect(Buffer.from(await answer.arrayBuffer())).toEqual(notes);
    // HEAD would open and stream the whole blob: there is none.
    expect((await fetch(outUrl(notesDigest), { method: 'HEAD' })).status).toBe(404);

    const clicked = await clickDownload(`${started.url}/runs/${run.id}?${link}`, 'models/model.bin');
    try {
      expect(clicked.failure).toBeNull();
      expect(clicked.name).toBe('model.bin');
      expect(clicked.bytes?.equals(model)).toBe(true);
      const row = clicked.page.locator('tr[data-out="models/model.bin"]');
      expect(await row.locator('td').allTextContents()).toEqual([
        'train',
        '1.5 MiB',
        modelDigest.slice('sha256:'.length, 'sha256:'.length + 12),
        '',
      ]);
      expect(await row.locator('code').getAttribute('title')).toBe(modelDigest);
      await browser.screenshot(clicked.page, `run-page-outputs-${store}`);
    } finally {
      await clicked.page.context().close();
    }

    // Only what the run stored opens: bytes never uploaded, another run's digest, a bad one.
    expect((await fetch(outUrl(missingDigest))).status).toBe(404);
    expect((await fetch(outUrl(digestOf(Buffer.from('elsewhere'))))).status).toBe(404);
    expect((await fetch(outUrl('sha256:nope'))).status).toBe(400);
    // And only for those who may see the run.
    expect((await fetch(outUrl(notesDigest).replace(/\?.*$/, ''))).status).toBe(404);
    expect(corruptionsLogged()).toEqual([]);
  }, 120_000);

  test(`fluksio app (${store} store): a corrupted output's download fails, never a complete-looking file, and is logged`, async () => {
    const started = await startPlane(store);
    const { run, model, notes, modelDigest, notesDigest, link, outUrl } = await runWithOutputs(started);
    await corrupt(modelDigest, model);
    await corrupt(notesDigest, notes);

    // Many chunks: the answer starts, then breaks off before its Content-Length.
    const large = await fetch(outUrl(modelDigest));
    expect(large.headers.get('content-length')).toBe(String(model.length));
    await expect(large.arrayBuffer()).rejects.toThrow();
    // One chunk: held back until verified, so no answer at all.
    await expect(fetch(outUrl(notesDigest)).then((answer) => answer.arrayBuffer())).rejects.toThrow();

    const clicked = await clickDownload(`${started.url}/runs/${run.id}?${link}`, 'models/model.bin');
    try {
      expect(clicked.failure).not.toBeNull();
      expect(clicked.bytes).toBeNull();
    } finally {
      await clicked.page.context().close();
    }
    // Each failed download is logged (Chromium may try again: as many lines, each of these two).
    expect(new Set(corruptionsLogged())).toEqual(new Set([modelDigest, notesDigest]));
    expect(logged.find((line) => line.digest === notesDigest)).toMatchObject({
      runId: run.id,
      path: 'notes "v1".txt',
      level: 50,
    });
  }, 120_000);
}

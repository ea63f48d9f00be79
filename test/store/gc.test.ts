import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sha256Hex } from '../../core/canonical-json.js';
import type { OutRecord } from '../../schemas/out-record.js';
import { blobRefs } from '../../schemas/tables/blob-refs.js';
import { cacheEntries } from '../../schemas/tables/cache-entries.js';
import { runs, type NewRun } from '../../schemas/tables/runs.js';
import { addBlobRef } from '../../store/blobs/add-blob-ref.js';
import { confirmBlobRef } from '../../store/blobs/confirm-blob-ref.js';
import { applyRunEvents } from '../../store/events/apply-run-events.js';
import { createRun } from '../../store/runs/create-run.js';
import type { Database } from '../../store/db/database.js';
import { gcStore } from '../../store/blobs/gc-store.js';
import { hasBlobRef } from '../../store/blobs/has-blob-ref.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { makeKeyInputs, makeRun, makeStageRecord, uniqueRepository } from './store-fixtures.js';

const DAY = 86_400_000;
const digest = (name: string): string => `sha256:${sha256Hex(name)}`;
const file = (name: string): OutRecord => ({ path: name, kind: 'file', digest: digest(name), size: 1 });

describe.each(databaseBackends)('garbage collection on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  /** A run of `repository` that finished `daysAgo`, whose one stage produced `outs` and the log `log`. */
  async function finishedRun(
    repository: string,
    daysAgo: number,
    { outs, log, ...overrides }: Partial<NewRun> & { outs: OutRecord[]; log: string },
  ): Promise<string> {
    const { run } = await createRun({ db, run: makeRun({ repository, status: 'succeeded', ...overrides }) });
    const stage = makeStageRecord({
      name: 'train',
      outs,
      logDigest: digest(log),
      keyInputs: makeKeyInputs({ cmd: run.id }),
    });
    await applyRunEvents({
      db,
      runId: run.id,
      repository,
      trustDomain: 'trusted',
      events: [{ type: 'stage.finished', stage }],
    });
    const past = sql`now() - (${daysAgo * DAY}::double precision * interval '1 millisecond')`;
    await db.update(runs).set({ finishedAt: past, createdAt: past }).where(eq(runs.id, run.id));
    await db.update(cacheEntries).set({ createdAt: past }).where(eq(cacheEntries.runId, run.id));
    return run.id;
  }

  async function refOf(repository: string, name: string, daysAgo: number): Promise<void> {
    await addBlobRef({ db, repository, digest: digest(name), size: 1, runId: 'uploader' });
    const past = sql`now() - (${daysAgo * DAY}::double precision * interval '1 millisecond')`;
    await db
      .update(blobRefs)
      .set({ createdAt: past, confirmedAt: past })
      .where(and(eq(blobRefs.repository, repository), eq(blobRefs.digest, digest(name))));
  }

  test('a blob ref is added once and opens the blob to its repository only', async () => {
    const repository = uniqueRepository();
    await addBlobRef({ db, repository, digest: digest('x'), size: 3, runId: 'uploader' });
    await addBlobRef({ db, repository, digest: digest('x'), size: 3, runId: 'uploader' });
    expect(await hasBlobRef({ db, repository, digest: digest('x') })).toBe(true);
    expect(await hasBlobRef({ db, repository: uniqueRepository(), digest: digest('x') })).toBe(false);
    expect(await hasBlobRef({ db, repository, digest: digest('y') })).toBe(false);
  });

  test("a later confirmation never moves a ref's confirmation time back, so gc sees every confirmer", async () => {
    const repository = uniqueRepository();
    await addBlobRef({ db, repository, digest: digest('racing'), size: 1, runId: 'first' });
    // A confirmation whose statement began before another's committed writes an older now().
    const ahead = sql`now() + interval '1 hour'`;
    await db.update(blobRefs).set({ confirmedAt: ahead }).where(eq(blobRefs.repository, repository));
    const row = async () => (await db.select().from(blobRefs).where(eq(blobRefs.repository, repository)))[0];
    const before = (await row())?.confirmedAt;
    expect(await confirmBlobRef({ db, repository, digest: digest('racing'), runId: 'second' })).toBe(true);
    expect(await row()).toMatchObject({ confirmedAt: before, confirmedBy: 'second' });
    await addBlobRef({ db, repository, digest: digest('racing'), size: 1, runId: 'third' });
    expect(await row()).toMatchObject({ confirmedAt: before, confirmedBy: 'third' });
  });

  test('old finished runs, their orphaned cache entries and blob refs nothing names go; the rest stays', async () => {
    const repository = uniqueRepository();
    const elsewhere = uniqueRepository();
    const dir: OutRecord = { path: 'data', kind: 'dir', digest: digest('manifest'), size: 2 };
    const failedOld = await finishedRun(repository, 40, {
      status: 'failed',
      outs: [file('old.bin')],
      log: 'old.log',
    });
    const succeededOlder = await finishedRun(repository, 50, { outs: [file('older.bin')], log: 'older.log' });
    const baseline = await finishedRun(repository, 40, { outs: [file('base.bin')], log: 'base.log' });
    const recent = await finishedRun(repository, 1, { status: 'failed', outs: [dir], log: 'recent.log' });
    // Still running, but created after the old refs were last confirmed (40 days ago): it
    // cannot have confirmed them, so it does not keep them.
    const { run: active } = await createRun({ db, run: makeRun({ repository, status: 'running' }) });
    await db
      .update(runs)
      .set({ createdAt: sql`now() - interval '35 days'` })
      .where(eq(runs.id, active.id));
    for (const name of ['old.bin', 'base.bin', 'manifest', 'a.txt', 'b.txt', 'old.log'])
      await refOf(repository, name, 40);
    await refOf(repository, 'uploading.bin', 0);
    await refOf(elsewhere, 'base.bin', 40);

    const first = await gcStore({ db, keepDays: 30 });
    const remaining = (
      await db.select({ id: runs.id }).from(runs).where(eq(runs.repository, repository))
    ).map((run) => run.id);
    expect(remaining.sort()).toEqual([baseline, recent, active.id].sort());
    expect(first.runsDeleted).toBeGreaterThanOrEqual(2);
    const entries = await db
      .select({ runId: cacheEntries.runId })
      .from(cacheEntries)
      .where(eq(cacheEntries.repository, repository));
    expect(entries.map((entry) => entry.runId).sort()).toEqual([baseline, recent].sort());
    expect(first.cacheEntriesDeleted).toBeGreaterThanOrEqual(2);
    expect([failedOld, succeededOlder].some((id) => remaining.includes(id))).toBe(false);

    // The directory's files are named only in its manifest: without a way to read it,
    // every ref of that repository stays. Another repository's ref of a live digest goes.
    expect(await hasBlobRef({ db, repository, digest: digest('old.bin') })).toBe(true);
    expect(await hasBlobRef({ db, repository: elsewhere, digest: digest('base.bin') })).toBe(false);
    expect(first.liveDigests).toContain(digest('base.bin'));
    expect(first.liveDigests).toContain(digest('manifest'));
    expect(first.liveDigests).toContain(digest('recent.log'));
    expect(first.liveDigests).not.toContain(digest('old.bin'));
    expect(first.unreadableManifests).toContainEqual({
      digest: digest('manifest'),
      repository,
      reason: 'gc was given no way to read manifests',
    });

    const read: string[] = [];
    const second = await gcStore({
      db,
      keepDays: 30,
      readManifest: async (manifest) => {
        read.push(manifest);
        return manifest === digest('manifest')
          ? { files: [digest('a.txt'), digest('b.txt')] }
          : { unreadable: 'not a manifest of this test' };
      },
    });
    expect(read).toEqual([digest('manifest')]);
    expect(second.runsDeleted).toBe(0);
    const refs = async (): Promise<Record<string, boolean>> => {
      const names = ['old.bin', 'old.log', 'base.bin', 'manifest', 'a.txt', 'b.txt', 'uploading.bin'];
      return Object.fromEntries(
        await Promise.all(
          names.map(async (name) => [name, await hasBlobRef({ db, repository, digest: digest(name) })]),
        ),
      );
    };
    expect(await refs()).toEqual({
      'old.bin': false,
      'old.log': false,
      'base.bin': true,
      manifest: true,
      'a.txt': true,
      'b.txt': true,
      'uploading.bin': true,
    });
    expect(second.blobRefsDeleted).toBeGreaterThanOrEqual(2);
    expect(second.liveDigests).toContain(digest('a.txt'));
    expect(second.unreadableManifests.filter((manifest) => manifest.repository === repository)).toEqual([]);
  });

  test("a directory manifest that cannot be read keeps its repository's blob refs and is named with why", async () => {
    const repository = uniqueRepository();
    const dir: OutRecord = { path: 'data', kind: 'dir', digest: digest('lost manifest'), size: 2 };
    await finishedRun(repository, 1, { outs: [dir], log: 'dir.log' });
    await finishedRun(repository, 40, { status: 'failed', outs: [file('gone.bin')], log: 'gone.log' });
    for (const name of ['lost manifest', 'inside.txt', 'gone.bin']) await refOf(repository, name, 40);

    const result = await gcStore({
      db,
      keepDays: 30,
      readManifest: async (manifest) =>
        manifest === digest('lost manifest') ? { unreadable: 'missing from the test' } : { files: [] },
    });
    expect(result.unreadableManifests).toContainEqual({
      digest: digest('lost manifest'),
      repository,
      reason: 'missing from the test',
    });
    expect(result.liveDigests).not.toContain(digest('inside.txt'));
    for (const name of ['lost manifest', 'inside.txt', 'gone.bin'])
      expect(await hasBlobRef({ db, repository, digest: digest(name) }), name).toBe(true);
  });
});

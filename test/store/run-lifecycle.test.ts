import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AmbiguousRunPrefixError } from '../../store/runs/ambiguous-run-prefix-error.js';
import { createRun } from '../../store/runs/create-run.js';
import type { Database } from '../../store/db/database.js';
import { findRun } from '../../store/runs/find-run.js';
import { finishRun } from '../../store/runs/finish-run.js';
import { listRuns } from '../../store/runs/list-runs.js';
import { startRun } from '../../store/runs/start-run.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { makeRun, uniqueRepository } from './store-fixtures.js';

describe.each(databaseBackends)('runs on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  test('the same trigger key twice makes one run', async () => {
    const repository = uniqueRepository();
    const triggerKey = `delivery-${randomBytes(4).toString('hex')}:0`;
    const first = await createRun({ db, run: makeRun({ repository, triggerKey, status: 'queued' }) });
    const second = await createRun({ db, run: makeRun({ repository, triggerKey, status: 'queued' }) });
    expect(first.created).toBe(true);
    expect(second).toEqual({ run: first.run, created: false });
    expect(await listRuns({ db, repository, limit: 10 })).toHaveLength(1);
  });

  test('a new run reads back with its defaults; a duplicate id is an error, not a no-op', async () => {
    const repository = uniqueRepository();
    const run = makeRun({ repository });
    const { run: created } = await createRun({ db, run });
    expect(created).toMatchObject({
      trustDomain: 'trusted',
      labels: [],
      attempt: 1,
      metrics: {},
      noCache: false,
      triggerKey: null,
      finishedAt: null,
    });
    expect(created.createdAt).toBeInstanceOf(Date);
    await expect(createRun({ db, run })).rejects.toThrow();
  });

  test('starting a run moves only a queued run to running and records the stamp', async () => {
    const repository = uniqueRepository();
    const { run } = await createRun({
      db,
      run: makeRun({ repository, status: 'queued', startedAt: null, codeDigest: null, envDigest: null }),
    });
    const started = await startRun({
      db,
      runId: run.id,
      stamp: { codeDigest: 'c1', envDigest: 'e1', dirty: true },
    });
    expect(started).toMatchObject({ status: 'running', codeDigest: 'c1', envDigest: 'e1', dirty: true });
    expect(started?.startedAt).toBeInstanceOf(Date);
    expect(await startRun({ db, runId: run.id })).toBeNull();
  });

  test('finishing a run records its outcome, and its duration by the database clock', async () => {
    const repository = uniqueRepository();
    const startedAt = new Date(Date.now() - 1500);
    const { run } = await createRun({ db, run: makeRun({ repository, startedAt }) });
    const finished = await finishRun({
      db,
      runId: run.id,
      status: 'failed',
      reason: 'Stage train failed: exit code 1',
      metrics: { loss: 0.25 },
    });
    expect(finished).toMatchObject({
      status: 'failed',
      statusReason: 'Stage train failed: exit code 1',
      metrics: { loss: 0.25 },
    });
    expect(finished?.durationMs).toBeGreaterThanOrEqual(1400);
    expect(finished?.durationMs).toBeLessThan(60_000);
    expect(finished?.finishedAt?.getTime()).toBeGreaterThan(startedAt.getTime());

    const finishedAt = new Date(startedAt.getTime() + 2500);
    const again = await finishRun({
      db,
      runId: run.id,
      status: 'succeeded',
      reason: null,
      metrics: {},
      finishedAt,
    });
    expect(again).toMatchObject({ status: 'succeeded', statusReason: null, finishedAt, durationMs: 2500 });
  });

  test('a run that never started finishes without a duration; an unknown run is null', async () => {
    const repository = uniqueRepository();
    const { run } = await createRun({ db, run: makeRun({ repository, status: 'queued', startedAt: null }) });
    const cancelled = await finishRun({
      db,
      runId: run.id,
      status: 'cancelled',
      reason: 'Cancelled',
      metrics: {},
    });
    expect(cancelled).toMatchObject({ status: 'cancelled', durationMs: null });
    expect(cancelled?.finishedAt).toBeInstanceOf(Date);
    expect(
      await finishRun({ db, runId: 'NO-SUCH-RUN', status: 'failed', reason: null, metrics: {} }),
    ).toBeNull();
  });

  test('runs list newest first, by repository and pipeline, up to the limit', async () => {
    const repository = uniqueRepository();
    const made = [];
    for (const pipelinePath of ['fluksio.yml', 'other/fluksio.yml', 'fluksio.yml']) {
      made.push((await createRun({ db, run: makeRun({ repository, pipelinePath }) })).run);
    }
    await createRun({ db, run: makeRun({ repository: uniqueRepository() }) });
    const ids = (runs: { id: string }[]): string[] => runs.map((run) => run.id);
    expect(ids(await listRuns({ db, repository, limit: 10 }))).toEqual(ids([...made].reverse()));
    expect(ids(await listRuns({ db, repository, pipelinePath: 'fluksio.yml', limit: 10 }))).toEqual(
      ids([made[2]!, made[0]!]),
    );
    expect(ids(await listRuns({ db, repository, limit: 1 }))).toEqual(ids([made[2]!]));
  });

  test("store functions take a caller's transaction, and roll back with it", async () => {
    const repository = uniqueRepository();
    const rolledBack = db.transaction(async (tx) => {
      await createRun({ db: tx, run: makeRun({ repository }) });
      expect(await listRuns({ db: tx, repository, limit: 10 })).toHaveLength(1);
      throw new Error('the caller changed its mind');
    });
    await expect(rolledBack).rejects.toThrow('the caller changed its mind');
    expect(await listRuns({ db, repository, limit: 10 })).toEqual([]);
  });

  describe('finding a run by id or prefix', () => {
    const stem = `T${randomBytes(4).toString('hex').toUpperCase()}`;
    beforeAll(async () => {
      const repository = uniqueRepository();
      for (const suffix of ['A1', 'A1X', 'A2', 'B1']) {
        await createRun({ db, run: makeRun({ repository, id: `${stem}${suffix}` }) });
      }
    });

    test('an exact id wins even when it prefixes other ids', async () => {
      expect((await findRun({ db, idOrPrefix: `${stem}A1` }))?.id).toBe(`${stem}A1`);
    });

    test('a unique prefix finds its run, in either case', async () => {
      expect((await findRun({ db, idOrPrefix: `${stem}B` }))?.id).toBe(`${stem}B1`);
      expect((await findRun({ db, idOrPrefix: `${stem}b`.toLowerCase() }))?.id).toBe(`${stem}B1`);
    });

    test('an ambiguous prefix is an error listing the candidates', async () => {
      const error = await findRun({ db, idOrPrefix: `${stem}A` }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(AmbiguousRunPrefixError);
      expect(error).toMatchObject({ candidates: [`${stem}A1`, `${stem}A1X`, `${stem}A2`], more: false });
      expect((error as Error).message).toBe(
        `Run id "${stem}A" matches more than one run (${stem}A1, ${stem}A1X, ${stem}A2); give more characters`,
      );
    });

    test('nothing matching is null, and LIKE wildcards are taken literally', async () => {
      expect(await findRun({ db, idOrPrefix: `${stem}C` })).toBeNull();
      expect(await findRun({ db, idOrPrefix: `${stem}_1` })).toBeNull();
      expect(await findRun({ db, idOrPrefix: `%${stem}B` })).toBeNull();
      expect(await findRun({ db, idOrPrefix: '' })).toBeNull();
    });
  });
});

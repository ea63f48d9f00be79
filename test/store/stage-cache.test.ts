import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sha256Hex } from '../../core/canonical-json.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { applyRunEvents } from '../../store/events/apply-run-events.js';
import { createRun } from '../../store/runs/create-run.js';
import type { Database } from '../../store/db/database.js';
import { findCacheEntry } from '../../store/cache/find-cache-entry.js';
import { previousStageInputs } from '../../store/cache/previous-stage-inputs.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { makeKeyInputs, makeRun, makeStageRecord, uniqueRepository } from './store-fixtures.js';

describe.each(databaseBackends)('the stage cache on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  /** Runs one stage to its finish event in a new run of `repository` in `trustDomain`. */
  async function finishStage(repository: string, trustDomain: string, stage: StageRecord): Promise<string> {
    const { run } = await createRun({ db, run: makeRun({ repository, trustDomain }) });
    await applyRunEvents({
      db,
      runId: run.id,
      repository,
      trustDomain,
      events: [{ type: 'stage.finished', stage }],
    });
    return run.id;
  }

  test("a stage that ran writes an entry from its own finish event, with the run's id", async () => {
    const repository = uniqueRepository();
    const train = makeStageRecord({ name: 'train' });
    const runId = await finishStage(repository, 'trusted', train);
    const entry = await findCacheEntry({
      db,
      repository,
      trustDomains: ['trusted'],
      key: train.cacheKey ?? '',
    });
    expect(entry).toEqual({
      key: train.cacheKey,
      stage: 'train',
      runId,
      outs: train.outs,
      metrics: train.metrics,
      keyInputs: train.keyInputs,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  test('a cached, failed or keyless stage writes no entry', async () => {
    const repository = uniqueRepository();
    const stages = [
      makeStageRecord({
        name: 'a',
        status: 'cached',
        cachedFrom: 'SOMEONE',
        keyInputs: makeKeyInputs({ cmd: 'a' }),
      }),
      makeStageRecord({ name: 'b', status: 'failed', exitCode: 1, keyInputs: makeKeyInputs({ cmd: 'b' }) }),
      makeStageRecord({ name: 'c', keyInputs: makeKeyInputs({ cmd: 'c' }), cacheKey: null }),
      makeStageRecord({ name: 'd', dirtyReasons: ['code changed while d ran: helpers.py changed'] }),
    ];
    for (const stage of stages) await finishStage(repository, 'trusted', stage);
    for (const stage of stages) {
      const key = stage.cacheKey ?? sha256Hex('c');
      expect(await findCacheEntry({ db, repository, trustDomains: ['trusted'], key })).toBeNull();
    }
  });

  test('entries are scoped by repository and trust domain; trusted wins where both hold a key', async () => {
    const repository = uniqueRepository();
    const train = makeStageRecord({ name: 'train' });
    const key = train.cacheKey ?? '';
    const forkRun = await finishStage(repository, 'pr:7', train);
    const find = (repo: string, trustDomains: string[]) =>
      findCacheEntry({ db, repository: repo, trustDomains, key });

    expect(await find(repository, ['trusted'])).toBeNull();
    expect(await find(repository, ['trusted', 'pr:8'])).toBeNull();
    expect(await find(repository, [])).toBeNull();
    expect((await find(repository, ['trusted', 'pr:7']))?.runId).toBe(forkRun);

    const trustedRun = await finishStage(repository, 'trusted', train);
    expect((await find(repository, ['trusted']))?.runId).toBe(trustedRun);
    expect((await find(repository, ['trusted', 'pr:7']))?.runId).toBe(trustedRun);
    expect((await find(repository, ['pr:7']))?.runId).toBe(forkRun);
    expect(await find(uniqueRepository(), ['trusted', 'pr:7'])).toBeNull();
  });

  test('a later finish event of the same key replaces a corrupt entry', async () => {
    const repository = uniqueRepository();
    const corrupt = makeStageRecord({ name: 'train' });
    const firstRun = await finishStage(repository, 'trusted', corrupt);
    const before = await findCacheEntry({
      db,
      repository,
      trustDomains: ['trusted'],
      key: corrupt.cacheKey ?? '',
    });

    const repaired = {
      ...corrupt,
      outs: [
        { path: 'model.bin', kind: 'file' as const, digest: `sha256:${sha256Hex('good model')}`, size: 10 },
      ],
      metrics: { accuracy: 0.91 },
    };
    const secondRun = await finishStage(repository, 'trusted', repaired);
    const after = await findCacheEntry({
      db,
      repository,
      trustDomains: ['trusted'],
      key: corrupt.cacheKey ?? '',
    });
    expect(before?.runId).toBe(firstRun);
    expect(after).toMatchObject({ runId: secondRun, outs: repaired.outs, metrics: { accuracy: 0.91 } });
    expect(Date.parse(after?.createdAt ?? '')).toBeGreaterThanOrEqual(Date.parse(before?.createdAt ?? ''));
  });

  test("a stage's previous inputs are those of the run before, of the same pipeline, that its reader may see", async () => {
    const repository = uniqueRepository();
    const older = makeStageRecord({ name: 'train', keyInputs: makeKeyInputs({ params: { lr: 0.01 } }) });
    const newer = makeStageRecord({
      name: 'train',
      status: 'failed',
      keyInputs: makeKeyInputs({ params: { lr: 0.1 } }),
    });
    const fork = makeStageRecord({ name: 'train', keyInputs: makeKeyInputs({ params: { lr: 1 } }) });
    const olderRun = await finishStage(repository, 'trusted', older);
    const newerRun = await finishStage(repository, 'trusted', newer);
    const forkRun = await finishStage(repository, 'pr:3', fork);
    const laterRun = await finishStage(repository, 'trusted', makeStageRecord({ name: 'train' }));
    await finishStage(uniqueRepository(), 'trusted', makeStageRecord({ name: 'train' }));

    const previous = (
      trustDomains: string[],
      beforeRunId: string,
      stage = 'train',
      pipelinePath = 'fluksio.yml',
    ) => previousStageInputs({ db, repository, pipelinePath, trustDomains, stage, beforeRunId });
    expect(await previous(['trusted'], laterRun)).toEqual({ runId: newerRun, keyInputs: newer.keyInputs });
    expect((await previous(['trusted'], newerRun))?.runId).toBe(olderRun);
    expect((await previous(['trusted', 'pr:3'], laterRun))?.runId).toBe(forkRun);
    expect(await previous(['trusted'], olderRun)).toBeNull();
    expect(await previous(['trusted'], laterRun, 'evaluate')).toBeNull();
    expect(await previous(['trusted'], laterRun, 'train', 'other/fluksio.yml')).toBeNull();
  });
});

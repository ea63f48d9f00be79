import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunEventBody } from '../../schemas/run-event.js';
import { applyRunEvents } from '../../store/events/apply-run-events.js';
import { createRun } from '../../store/runs/create-run.js';
import type { Database } from '../../store/db/database.js';
import { findCacheEntry } from '../../store/cache/find-cache-entry.js';
import { getRunDetail } from '../../store/runs/get-run-detail.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { makeKeyInputs, makeRun, makeStageRecord, uniqueRepository } from './store-fixtures.js';

describe.each(databaseBackends)('run events on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  /** A new run of a new repository, and a way to apply events to it. */
  async function newRun(): Promise<{
    runId: string;
    repository: string;
    apply(events: RunEventBody[]): Promise<void>;
  }> {
    const repository = uniqueRepository();
    const { run } = await createRun({ db, run: makeRun({ repository }) });
    return {
      runId: run.id,
      repository,
      apply: (events) => applyRunEvents({ db, runId: run.id, repository, trustDomain: 'trusted', events }),
    };
  }

  test('stages read back in the order they first appeared, as their finish events reported them', async () => {
    const { runId, apply } = await newRun();
    const prepare = makeStageRecord({
      name: 'prepare',
      keyInputs: makeKeyInputs({ cmd: 'python prepare.py' }),
    });
    const train = makeStageRecord({ name: 'train', reasons: ['train.py changed', 'lr 0.01 → 0.1'] });
    await apply([
      { type: 'stage.started', stage: 'prepare', at: '2025-01-02T03:04:05.678Z' },
      { type: 'stage.log', stage: 'prepare', lines: ['reading data/raw.csv'] },
      { type: 'stage.finished', stage: prepare },
      { type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:07.000Z' },
    ]);
    expect((await getRunDetail({ db, runId }))?.stages).toEqual([
      prepare,
      expect.objectContaining({ name: 'train', status: 'running', startedAt: '2025-01-02T03:04:07.000Z' }),
    ]);

    // A stage whose start was never reported (a skipped one) still takes the next place.
    const evaluate = makeStageRecord({
      name: 'evaluate',
      status: 'skipped',
      cacheKey: null,
      keyInputs: null,
    });
    await apply([
      { type: 'stage.finished', stage: evaluate },
      { type: 'stage.finished', stage: train },
    ]);
    expect((await getRunDetail({ db, runId }))?.stages).toEqual([prepare, train, evaluate]);
  });

  test('a failing batch applies nothing', async () => {
    const { runId, repository, apply } = await newRun();
    const train = makeStageRecord({ name: 'train' });
    const broken = makeStageRecord({ name: 'evaluate', exitCode: 2 ** 40 }); // beyond an integer column
    await expect(
      apply([
        { type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:05.678Z' },
        { type: 'metric.points', points: [{ stage: 'train', name: 'loss', step: 0, value: 1 }] },
        { type: 'annotation', annotation: annotation('train') },
        { type: 'stage.finished', stage: train },
        { type: 'stage.finished', stage: broken },
      ]),
    ).rejects.toThrow();
    expect(await getRunDetail({ db, runId })).toMatchObject({ stages: [], annotations: [], series: {} });
    expect(
      await findCacheEntry({ db, repository, trustDomains: ['trusted'], key: train.cacheKey ?? '' }),
    ).toBeNull();
  });

  test('metric points form series by step; a point reported again keeps its last value', async () => {
    const { runId, apply } = await newRun();
    await apply([
      { type: 'stage.started', stage: 'train', at: '2025-01-02T03:04:05.678Z' },
      {
        type: 'metric.points',
        points: [
          { stage: 'train', name: 'loss', step: 1, value: 0.5 },
          { stage: 'train', name: 'loss', step: 0, value: 1 },
          { stage: 'train', name: 'loss', step: 1, value: 0.4 },
        ],
      },
      { type: 'metric.points', points: [{ stage: 'train', name: 'accuracy', step: 0, value: 0.7 }] },
    ]);
    await apply([{ type: 'metric.points', points: [{ stage: 'train', name: 'loss', step: 2, value: 0.3 }] }]);
    await apply([
      { type: 'metric.points', points: [{ stage: 'train', name: 'loss', step: 2, value: 0.25 }] },
    ]);
    expect((await getRunDetail({ db, runId }))?.series).toEqual({
      loss: {
        stage: 'train',
        points: [
          { step: 0, value: 1 },
          { step: 1, value: 0.4 },
          { step: 2, value: 0.25 },
        ],
      },
      accuracy: { stage: 'train', points: [{ step: 0, value: 0.7 }] },
    });
  });

  test('a batch of many thousands of points is written whole', async () => {
    const { runId, apply } = await newRun();
    const points = Array.from({ length: 25_000 }, (_, step) => ({
      stage: 'train',
      name: 'loss',
      step,
      value: 1 / (step + 1),
    }));
    await apply([{ type: 'metric.points', points }]);
    const series = (await getRunDetail({ db, runId }))?.series.loss;
    expect(series?.points).toHaveLength(25_000);
    expect(series?.points.at(-1)).toEqual({ step: 24_999, value: 1 / 25_000 });
  });

  test("a cached stage's series come from the run that executed it, whatever the stage was called there", async () => {
    const source = await newRun();
    const fit = makeStageRecord({ name: 'fit' });
    await source.apply([
      { type: 'stage.started', stage: 'fit', at: '2025-01-02T03:04:05.678Z' },
      {
        type: 'metric.points',
        points: [
          { stage: 'fit', name: 'loss', step: 0, value: 1 },
          { stage: 'fit', name: 'loss', step: 1, value: 0.5 },
        ],
      },
      { type: 'stage.finished', stage: fit },
    ]);

    const restored = await newRun();
    const train = makeStageRecord({
      name: 'train',
      status: 'cached',
      cacheKey: fit.cacheKey,
      cachedFrom: source.runId,
      reasons: [],
    });
    await restored.apply([{ type: 'stage.finished', stage: train }]);
    expect(await getRunDetail({ db, runId: restored.runId })).toMatchObject({
      stages: [train],
      series: {
        loss: {
          stage: 'train',
          points: [
            { step: 0, value: 1 },
            { step: 1, value: 0.5 },
          ],
        },
      },
    });
  });

  test('a stage started again (a new attempt) is running again, in its old place', async () => {
    const { runId, apply } = await newRun();
    await apply([
      { type: 'stage.finished', stage: makeStageRecord({ name: 'prepare' }) },
      {
        type: 'stage.finished',
        stage: makeStageRecord({ name: 'train', status: 'failed', error: 'exit code 1' }),
      },
    ]);
    await apply([{ type: 'stage.started', stage: 'prepare', at: '2025-01-03T00:00:00.000Z' }]);
    const stages = (await getRunDetail({ db, runId }))?.stages;
    expect(stages?.map(({ name, status }) => ({ name, status }))).toEqual([
      { name: 'prepare', status: 'running' },
      { name: 'train', status: 'failed' },
    ]);
    expect(stages?.[0]).toMatchObject({
      startedAt: '2025-01-03T00:00:00.000Z',
      finishedAt: null,
      outs: [],
      error: null,
    });
  });

  test('why a running stage’s job waits is kept until it runs; a finished stage waits for nothing', async () => {
    const { runId, apply } = await newRun();
    const pendingOf = async (name: string) =>
      (await getRunDetail({ db, runId }))?.stages.find((stage) => stage.name === name)?.pending;
    await apply([
      { type: 'stage.started', stage: 'train', at: '2025-01-03T00:00:00.000Z' },
      { type: 'stage.pending', stage: 'train', pending: { job: '12', reason: 'Priority' } },
      { type: 'stage.pending', stage: 'train', pending: { job: '12', reason: 'Resources' } },
    ]);
    expect(await pendingOf('train')).toEqual({ job: '12', reason: 'Resources' });
    await apply([{ type: 'stage.pending', stage: 'train', pending: null }]);
    expect(await pendingOf('train')).toBeNull();

    await apply([{ type: 'stage.pending', stage: 'train', pending: { job: '12', reason: 'Resources' } }]);
    await apply([{ type: 'stage.finished', stage: makeStageRecord({ name: 'train' }) }]);
    expect(await pendingOf('train')).toBeNull();
    // A late report about a stage no longer running changes nothing.
    await apply([{ type: 'stage.pending', stage: 'train', pending: { job: '12', reason: 'Resources' } }]);
    expect(await pendingOf('train')).toBeNull();
  });

  test('annotations read back in the order reported', async () => {
    const { runId, apply } = await newRun();
    const first = annotation('train', 'first');
    const second = {
      ...annotation('evaluate', 'second'),
      path: null,
      line: null,
      title: null,
      level: 'notice' as const,
    };
    await apply([
      { type: 'annotation', annotation: first },
      { type: 'annotation', annotation: second },
    ]);
    await apply([{ type: 'annotation', annotation: first }]);
    expect((await getRunDetail({ db, runId }))?.annotations).toEqual([first, second, first]);
  });

  test('an unknown run has no detail', async () => {
    expect(await getRunDetail({ db, runId: 'NO-SUCH-RUN' })).toBeNull();
  });
});

function annotation(stage: string, message = 'ZeroDivisionError: division by zero') {
  return { stage, path: 'train.py', line: 42, level: 'error' as const, message, title: 'Traceback' };
}

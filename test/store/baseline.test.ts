import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { NewRun } from '../../schemas/tables/runs.js';
import { createRun } from '../../store/runs/create-run.js';
import type { Database } from '../../store/db/database.js';
import { findBaseline } from '../../store/runs/find-baseline.js';
import { databaseBackends } from '../helpers/test-databases.js';
import { makeRun, uniqueRepository } from './store-fixtures.js';

const [c1, c2, c3, c4] = ['1', '2', '3', '4'].map((digit) => digit.repeat(40)) as [
  string,
  string,
  string,
  string,
];

describe.each(databaseBackends)('finding the baseline on $name', ({ open }) => {
  let db: Database;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ db, close } = await open());
  });
  afterAll(() => close());

  async function run(overrides: Partial<NewRun> & { repository: string }): Promise<string> {
    return (await createRun({ db, run: makeRun({ status: 'succeeded', ...overrides }) })).run.id;
  }

  /** Nearest first: the new run is at c4, its ancestors c3, c2, c1. */
  const commits = [c4, c3, c2, c1];

  test('the nearest commit with a succeeded run of the pipeline wins, preferring equal params, then the newest', async () => {
    const repository = uniqueRepository();
    const self = await run({ repository, commit: c4 });
    await run({ repository, commit: c4, status: 'running' });
    await run({ repository, commit: c3, status: 'failed' });
    await run({ repository, commit: c3, pipelinePath: 'other/fluksio.yml' });
    await run({ repository: uniqueRepository(), commit: c3 });
    const sameParams = await run({ repository, commit: c2, paramsDigest: 'p' });
    const newest = await run({ repository, commit: c2, paramsDigest: 'q' });
    await run({ repository, commit: c1, paramsDigest: 'p' });

    const baseline = (paramsDigest: string) =>
      findBaseline({
        db,
        repository,
        pipelinePath: 'fluksio.yml',
        commits,
        excludeRunId: self,
        paramsDigest,
      });
    expect((await baseline('p'))?.id).toBe(sameParams);
    expect((await baseline('q'))?.id).toBe(newest);
    expect((await baseline('r'))?.id).toBe(newest);
  });

  test('a dirty run or a run of some stages only is never a baseline', async () => {
    const repository = uniqueRepository();
    const self = await run({ repository, commit: c4 });
    const whole = await run({ repository, commit: c2 });
    await run({ repository, commit: c3, dirty: true });
    await run({
      repository,
      commit: c3,
      selection: { named: ['train'], downstream: false, stages: ['prepare', 'train'] },
    });
    const found = await findBaseline({
      db,
      repository,
      pipelinePath: 'fluksio.yml',
      commits,
      excludeRunId: self,
      paramsDigest: 'p',
    });
    expect(found?.id).toBe(whole);
  });

  test('the run itself is never its own baseline, but a sibling at its commit may be', async () => {
    const repository = uniqueRepository();
    const self = await run({ repository, commit: c4 });
    expect(
      await findBaseline({
        db,
        repository,
        pipelinePath: 'fluksio.yml',
        commits,
        excludeRunId: self,
        paramsDigest: 'p',
      }),
    ).toBeNull();
    const sibling = await run({ repository, commit: c4 });
    const found = await findBaseline({
      db,
      repository,
      pipelinePath: 'fluksio.yml',
      commits,
      excludeRunId: self,
      paramsDigest: 'p',
    });
    expect(found?.id).toBe(sibling);
  });

  test('no commits, or none with a succeeded run, means no baseline', async () => {
    const repository = uniqueRepository();
    const self = await run({ repository, commit: c4 });
    await run({ repository, commit: 'f'.repeat(40) });
    const find = (list: string[]) =>
      findBaseline({
        db,
        repository,
        pipelinePath: 'fluksio.yml',
        commits: list,
        excludeRunId: self,
        paramsDigest: 'p',
      });
    expect(await find([])).toBeNull();
    expect(await find(commits)).toBeNull();
  });
});

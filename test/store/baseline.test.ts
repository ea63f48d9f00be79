import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { NewRun } from '../../schemas/tables/runs.js';
import { createRun } from '../../store/runs/create-run.js';
import type { Database } from '../../store/db/database.js';
import { findBaseline } from '../../store/runs/find-baseline.js';
import { fixRunBaseline } from '../../store/runs/fix-run-baseline.js';
import { recordBaselineCommits } from '../../store/runs/record-baseline-commits.js';
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

  describe('fixed when the run finishes', () => {
    const fix = async (id: string, ownCommit = false) =>
      (await fixRunBaseline({ db, run: { id }, ownCommit }))!;

    test('a submitted run without listed commits is fixed at its own commit; an unfinished run is not fixed', async () => {
      const repository = uniqueRepository();
      const atOwnCommit = await run({ repository, commit: c4 });
      await run({ repository, commit: c3 });
      const unfinished = await run({ repository, commit: c4, status: 'running' });
      expect(await fix(unfinished)).toMatchObject({ baselineFixed: false, baselineRunId: null });
      const self = await run({ repository, commit: c4, status: 'failed' });
      expect(await fix(self)).toMatchObject({ baselineFixed: true, baselineRunId: atOwnCommit });
    });

    test('an App-made run waits for its recorded commits, recorded once, or is fixed at its own commit when the lookup is given up', async () => {
      const repository = uniqueRepository();
      const atOwnCommit = await run({ repository, commit: c4 });
      const atMergeBase = await run({ repository, commit: c2 });
      const appMade = { repository, commit: c4, installationId: 42, status: 'failed' as const };
      const self = await run(appMade);
      expect(await fix(self)).toMatchObject({ baselineFixed: false, baselineRunId: null });
      await recordBaselineCommits({ db, runId: self, commits: [c2, c1], mergeBase: c2 });
      // Recorded once: a second answer never replaces the first.
      const again = await recordBaselineCommits({ db, runId: self, commits: [c4], mergeBase: null });
      expect(again).toMatchObject({ baselineCommits: [c2, c1], baselineMergeBase: c2 });
      expect(await fix(self)).toMatchObject({ baselineFixed: true, baselineRunId: atMergeBase });

      const givenUp = await run(appMade);
      expect(await fix(givenUp)).toMatchObject({ baselineFixed: false });
      expect(await fix(givenUp, true)).toMatchObject({ baselineFixed: true, baselineRunId: atOwnCommit });
    });

    test("a sweep's members share one baseline, chosen with its first point's params, whatever finishes first", async () => {
      const repository = uniqueRepository();
      const groupId = `sweep-${repository}`;
      const likeFirst = await run({ repository, commit: c3, paramsDigest: 'p' });
      await run({ repository, commit: c3, paramsDigest: 'q' });
      const member = (groupIndex: number, paramsDigest: string) =>
        run({ repository, commit: c4, groupId, groupIndex, paramsDigest, baselineCommits: [c4, c3] });
      const first = await member(0, 'p');
      const second = await member(1, 'q');
      // The second point finishes first: it chooses as the first point would.
      expect(await fix(second)).toMatchObject({ baselineFixed: true, baselineRunId: likeFirst });
      // A success made later, at a nearer commit, changes nothing for the sweep.
      await run({ repository, commit: c4, paramsDigest: 'p' });
      expect(await fix(first)).toMatchObject({ baselineFixed: true, baselineRunId: likeFirst });
      // A member the App made whose own lookup is not recorded yet takes the sweep's.
      const third = await run({ repository, commit: c4, groupId, groupIndex: 2, installationId: 42 });
      expect(await fix(third)).toMatchObject({
        baselineFixed: true,
        baselineRunId: likeFirst,
        baselineCommits: [c4, c3],
      });
    });
  });
});

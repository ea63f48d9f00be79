import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { sha256Hex } from '../../core/canonical-json.js';
import type { TestRepo } from '../helpers/make-repo.js';
import { makeMlProject } from '../helpers/ml-project.js';
import { recordEarlierRuns } from '../helpers/record-earlier-runs.js';
import { runCli, runJson, statuses } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

const env = { DEVICE: 'cpu' };
const run = (args: string[] = []) => runJson(args, { cwd: repo.dir, env });

describe('a cached run with a long history', () => {
  test('restores from the run that made its outputs and compares with the newest equal-params run here', async () => {
    repo = await makeMlProject();
    const first = await run();
    expect(first.code, first.stderr).toBe(0);
    // 120 earlier runs: most with other params, half of those at other commits; every
    // 40th with the first run's params at this very commit.
    const earlier = await recordEarlierRuns(join(repo.dir, '.fluksio'), 120, (i, base) =>
      i % 40 === 39
        ? base
        : {
            params: { ...base.params, lr: (i + 1) / 1000 },
            commit: i % 2 ? sha256Hex(`elsewhere ${i}`).slice(0, 40) : base.commit,
          },
    );
    const newestEqual = earlier[119];

    const cached = await run();
    expect(cached.code, cached.stderr).toBe(0);
    expect(statuses(cached.report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
    for (const stage of cached.report.stages) expect(stage.cachedFrom).toBe(first.report.run.id);
    expect(cached.report.metrics).toEqual(first.report.metrics);
    expect(cached.report.baseline?.id).toBe(newestEqual);

    // Other params: the stages they reach re-run (earlier runs replayed the first run's key inputs).
    const other = await run(['lr=0.5']);
    expect(statuses(other.report)).toEqual({ prepare: 'cached', train: 'ran', evaluate: 'ran' });
    expect(other.report.stages.find((stage) => stage.name === 'train')?.reasons).toEqual(['lr 0.01 → 0.5']);

    // The commands that read history see every run, and agree with the run on its baseline.
    const listed = await runCli(['runs', '--json', '--limit', '1000'], { cwd: repo.dir });
    expect(listed.code, listed.stderr).toBe(0);
    const ids = (JSON.parse(listed.stdout) as { id: string }[]).map((each) => each.id);
    expect(ids).toHaveLength(123);
    expect(ids.slice(0, 2)).toEqual([other.report.run.id, cached.report.run.id]);
    expect(new Set(ids)).toEqual(
      new Set([first.report.run.id, ...earlier, cached.report.run.id, other.report.run.id]),
    );
    const shown = await runCli(['show', cached.report.run.id, '--json'], { cwd: repo.dir });
    expect(JSON.parse(shown.stdout)).toMatchObject({
      baseline: { id: newestEqual },
      stages: cached.report.stages.map(({ name, status, cachedFrom }) => ({ name, status, cachedFrom })),
    });
  }, 240_000);
});

describe('a store without its index', () => {
  test('gets it back from the journals before the next run, which hits', async () => {
    repo = await makeMlProject();
    const first = await run();
    await rm(join(repo.dir, '.fluksio', 'index'), { recursive: true });
    const again = await run();
    expect(statuses(again.report)).toEqual({ prepare: 'cached', train: 'cached', evaluate: 'cached' });
    for (const stage of again.report.stages) expect(stage.cachedFrom).toBe(first.report.run.id);
    expect(again.report.baseline?.id).toBe(first.report.run.id);
  });
});

describe('two runs at once in one project', () => {
  test('both run to the end and both are recorded, the second waiting for the first', async () => {
    repo = await makeMlProject();
    const [one, two] = await Promise.all([run(), run(['lr=0.2'])]);
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    // Whichever went second restored prepare from the first: the runs did not interleave.
    const second = [one, two].find((each) => each.report.stages[0]?.status === 'cached');
    expect(second).toBeDefined();
    const listed = await runCli(['runs', '--json'], { cwd: repo.dir });
    expect(
      (JSON.parse(listed.stdout) as { id: string; status: string }[]).map((each) => each.status),
    ).toEqual(['succeeded', 'succeeded']);
    expect(
      (await readdir(join(repo.dir, '.fluksio', 'journal'))).filter((name) => name.endsWith('.jsonl')),
    ).toHaveLength(2);
  });
});

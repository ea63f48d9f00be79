import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runCli, runJson, stageOf, statuses } from '../helpers/run-cli.js';

let repo: TestRepo;
afterEach(async () => {
  await repo?.cleanup();
});

const run = async () => {
  const result = await runJson([], { cwd: repo.dir });
  expect(result.report.run.status, `${result.stdout}\n${result.stderr}`).toBe('succeeded');
  return result.report;
};

const summary = (out = 'results/summary.txt') => readFile(path.join(repo.dir, out), 'utf8');

/** Stages writing one JSON file each into results/, and `summarize`, which lists them all. */
const PRODUCE = (name: string) => [
  `  ${name}:`,
  `    cmd: python3 produce.py ${name}`,
  `    outs: [results/${name}.json]`,
];
const SUMMARIZE = (deps: string[], out = 'results/summary.txt') => [
  '  summarize:',
  `    cmd: python3 summarize.py ${out}`,
  `    deps: [${deps.join(', ')}]`,
  `    outs: [${out}]`,
];
const pipeline = (...stages: string[][]) => ['version: 1', 'stages:', ...stages.flat(), ''].join('\n');

async function listingRepo(yml: string): Promise<void> {
  repo = await makeRepo({
    files: {
      'fluksio.yml': yml,
      'produce.py':
        'import json, os, sys\nos.makedirs("results", exist_ok=True)\njson.dump({"n": 1}, open(f"results/{sys.argv[1]}.json", "w"))\n',
      // It declares only a.json, but globs the folder and reads every file it finds.
      'summarize.py':
        'import glob, os, sys\nnames = sorted(os.path.basename(f) for f in glob.glob("results/*.json"))\nfor f in names: open(os.path.join("results", f)).read()\nopen(sys.argv[1], "w").write(" ".join(names) + "\\n")\n',
    },
  });
}

describe('a traced stage that lists a folder holding outs of other stages it does not declare', () => {
  test('a stage added beside the listed outs never leaves the listing stage restored from before: it runs, uncached, and says which deps to add', async () => {
    // Before, a listing left other stages' outs out of its digest: after `b` was added,
    // summarize was restored from the run before b existed, listing only a.json, every run.
    await listingRepo(pipeline(PRODUCE('a'), SUMMARIZE(['results/a.json'])));
    expect(statuses(await run())).toEqual({ a: 'ran', summarize: 'ran' });
    // Its own out and a declared dep in the listed folder: it caches as before.
    expect(statuses(await run())).toEqual({ a: 'cached', summarize: 'cached' });

    await repo.write('fluksio.yml', pipeline(PRODUCE('a'), PRODUCE('b'), SUMMARIZE(['results/a.json'])));
    await repo.commitAll('add b');
    const added = await run();
    expect(statuses(added)).toEqual({ a: 'cached', b: 'ran', summarize: 'ran' });
    expect(stageOf(added, 'summarize')).toMatchObject({
      cacheKey: null,
      reasons: ['summarize lists results/, which holds outs of b (results/b.json) it does not declare'],
    });
    expect(stageOf(added, 'summarize').notes).toContain(
      'summarize: not cached: it lists results/, which holds outs of b (results/b.json) it does not declare; add them to its deps',
    );
    expect(await summary()).toBe('a.json b.json\n');

    const again = await runCli(['run'], { cwd: repo.dir });
    expect(again.stdout).toMatch(/summarize\s+\S+ ran/);
    expect(again.stdout).toContain(
      'summarize: not cached: it lists results/, which holds outs of b (results/b.json) it does not declare; add them to its deps',
    );

    // Declared, b's out is keyed as a dep: summarize caches again.
    await repo.write(
      'fluksio.yml',
      pipeline(PRODUCE('a'), PRODUCE('b'), SUMMARIZE(['results/a.json', 'results/b.json'])),
    );
    await repo.commitAll('declare b');
    expect(stageOf(await run(), 'summarize').cacheKey).not.toBeNull();
    expect(statuses(await run())).toEqual({ a: 'cached', b: 'cached', summarize: 'cached' });
    expect(await summary()).toBe('a.json b.json\n');
  });

  test('an out declared under the listed folder that no run made yet keeps the stage uncached too; a dep on the folder caches it', async () => {
    // `late` runs after summarize: the folder does not hold its out yet when summarize lists it.
    await listingRepo(pipeline(PRODUCE('a'), SUMMARIZE(['results/a.json']), PRODUCE('late')));
    const first = await run();
    expect(stageOf(first, 'summarize')).toMatchObject({ status: 'ran', cacheKey: null });
    expect(stageOf(first, 'summarize').notes).toContain(
      'summarize: not cached: it lists results/, which holds outs of late (results/late.json) it does not declare; add them to its deps',
    );
    expect(statuses(await run())).toEqual({ a: 'cached', summarize: 'ran', late: 'cached' });

    // Its out moves out of the folder: a dep on a folder holding its own out is a cycle.
    await repo.write(
      'fluksio.yml',
      pipeline(PRODUCE('a'), SUMMARIZE(['results'], 'summary.txt'), PRODUCE('late')),
    );
    await repo.commitAll('depend on the folder');
    expect(stageOf(await run(), 'summarize').cacheKey).not.toBeNull();
    expect(statuses(await run())).toEqual({ a: 'cached', summarize: 'cached', late: 'cached' });
    expect(await summary('summary.txt')).toBe('a.json late.json\n');
  });
});

import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, statuses, type RunJson } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

/**
 * A traced Python stage is looked up by its entries' read sets, each file checked against
 * the code as it is. The code a stage reads is the code when it starts, not when the run
 * began: a file edited while an earlier stage ran (by the user, or by that stage writing
 * into the source tree) was checked against the run's first reading of the tree, which
 * still held the old file, and restored the result computed from it.
 */

/** Each test runs fluksio three times and an uncached twin; a loaded 2-core machine needs the room. */
const SLOW = 240_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const run = async (): Promise<RunJson> => {
  const { report, stdout, stderr } = await runJson([], { cwd: repo.dir });
  expect(report.run.status, `${stdout}\n${stderr}`).toBe('succeeded');
  return report;
};

const PIPELINE = `version: 1
stages:
  first:
    cmd: python3 first.py
    deps: [first.py, mode.txt]
    outs: [first.txt]
    code: false
  second:
    cmd: python3 second.py
    deps: [second.py, first.txt]
    outs: [second.txt]
`;

const SECOND = `from helper import VALUE
open("second.txt", "w").write(f"second saw {VALUE}\\n")
`;

const secondSaw = () => readFile(join(repo.dir, 'second.txt'), 'utf8');

async function expectSameAsUncached(): Promise<void> {
  const outputs = ['first.txt', 'second.txt'];
  const twin = await runUncachedTwin({ dir: repo.dir, outputs });
  expect(twin.report.run.status).toBe('succeeded');
  expect(await snapshotPaths(repo.dir, outputs)).toEqual(twin.outputs);
}

test(
  'a module an earlier stage regenerates in the source tree is read by the stage after it as regenerated, never restored from before',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/first.txt\n/second.txt\n',
        'fluksio.yml': PIPELINE,
        'mode.txt': 'plain\n',
        // Makes the same first.txt either way: only the module it writes beside it differs.
        'first.py': `if open("mode.txt").read().strip() == "generate":
    open("helper.py", "w").write('VALUE = "generated"\\n')
open("first.txt", "w").write("first\\n")
`,
        'second.py': SECOND,
        'helper.py': 'VALUE = "committed"\n',
      },
    });
    expect(statuses(await run())).toEqual({ first: 'ran', second: 'ran' });
    expect(await secondSaw()).toBe('second saw committed\n');

    await repo.write('mode.txt', 'generate\n');
    const generated = await run();
    expect(stageOf(generated, 'first').status).toBe('ran');
    expect(stageOf(generated, 'second')).toMatchObject({ status: 'ran', reasons: ['helper.py changed'] });
    expect(await secondSaw()).toBe('second saw generated\n');
    await expectSameAsUncached();
  },
  SLOW,
);

test(
  'a module the user edits while an earlier stage runs is read by the stage after it as edited, never restored from before',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '*.started\n*.go\n/first.txt\n/second.txt\n',
        'fluksio.yml': PIPELINE,
        'mode.txt': 'one\n',
        // Signals it started, then waits until the test says go: the user edits meanwhile.
        'first.py': `import os, sys, time
open("first.started", "w").close()
deadline = time.time() + 90
while not os.path.exists("first.go"):
    if time.time() > deadline:
        sys.exit("nobody said go")
    time.sleep(0.02)
open("first.txt", "w").write("first\\n")
`,
        'second.py': SECOND,
        'helper.py': 'VALUE = "committed"\n',
      },
    });
    await writeFile(join(repo.dir, 'first.go'), '');
    expect(statuses(await run())).toEqual({ first: 'ran', second: 'ran' });
    expect(await secondSaw()).toBe('second saw committed\n');

    await rm(join(repo.dir, 'first.go'));
    await rm(join(repo.dir, 'first.started'));
    await repo.write('mode.txt', 'two\n');
    const running = run();
    await expect.poll(() => existsSync(join(repo.dir, 'first.started')), { timeout: 60_000 }).toBe(true);
    await repo.write('helper.py', 'VALUE = "edited during the run"\n');
    await writeFile(join(repo.dir, 'first.go'), '');
    const edited = await running;

    expect(stageOf(edited, 'first').status).toBe('ran');
    expect(stageOf(edited, 'second')).toMatchObject({ status: 'ran', reasons: ['helper.py changed'] });
    expect(await secondSaw()).toBe('second saw edited during the run\n');
    expect(edited.run.dirtyReasons).toEqual(['code changed while first ran: helper.py changed']);
    await expectSameAsUncached();
  },
  SLOW,
);

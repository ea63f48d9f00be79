import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf, type RunJson } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

/**
 * A traced Python stage is keyed on what it read, not on the whole code. What it only
 * looked up — `os.path.exists`, `Path.is_dir`, `os.path.getsize` — opens nothing and raises
 * no audit event, yet decides what it computes: a config override, a checkpoint to resume
 * from, a folder of extra data. A file appearing where it found none (committed, even) left
 * the stage restored with the result computed without it.
 */

const SLOW = 120_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

const PIPELINE = `version: 1
stages:
  train:
    cmd: python3 train.py
    deps: [train.py]
    outs: [results/model.txt]
`;

const run = async (): Promise<RunJson> => {
  const { report, stdout, stderr } = await runJson([], { cwd: repo.dir });
  expect(report.run.status, `${stdout}\n${stderr}`).toBe('succeeded');
  return report;
};

const model = () => readFile(path.join(repo.dir, 'results/model.txt'), 'utf8');

async function expectEqualsUncached(): Promise<void> {
  const twin = await runUncachedTwin({ dir: repo.dir, outputs: ['results/model.txt'] });
  expect(twin.report.run.status).toBe('succeeded');
  expect(await snapshotPaths(repo.dir, ['results/model.txt'])).toEqual(twin.outputs);
}

test(
  'a file committed where the stage looked for one with os.path.exists re-runs it; removing it again finds the first entry',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/results/\n',
        'fluksio.yml': PIPELINE,
        'train.py': `import json, os
config = {"lr": 1}
if os.path.exists("override.json"):
    config.update(json.load(open("override.json")))
os.makedirs("results", exist_ok=True)
open("results/model.txt", "w").write(str(config["lr"]) + "\\n")
`,
      },
    });
    await repo.commitAll('train');
    expect(stageOf(await run(), 'train').status).toBe('ran');
    expect(await model()).toBe('1\n');
    expect(stageOf(await run(), 'train').status).toBe('cached');

    await repo.write('override.json', '{"lr": 5}\n');
    await repo.commitAll('override the learning rate');
    const overridden = await run();
    expect(stageOf(overridden, 'train')).toMatchObject({
      status: 'ran',
      reasons: ['override.json appeared'],
    });
    expect(await model()).toBe('5\n');
    await expectEqualsUncached();

    await repo.git('rm', '-q', 'override.json');
    await repo.commitAll('back to the default');
    const back = await run();
    expect(stageOf(back, 'train').status).toBe('cached');
    expect(await model()).toBe('1\n');
    await expectEqualsUncached();
  },
  SLOW,
);

test(
  'a folder the stage checked with Path.is_dir that goes away, and a file whose size it asked, re-run it',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/results/\n/checkpoints/\n/blob.bin\n',
        'fluksio.yml': PIPELINE,
        'blob.bin': 'abc',
        'train.py': `import os, pathlib
resumed = pathlib.Path("checkpoints").is_dir()
big = os.path.getsize("blob.bin") > 3
os.makedirs("results", exist_ok=True)
open("results/model.txt", "w").write(f"resumed={resumed} big={big}\\n")
`,
      },
    });
    await mkdir(path.join(repo.dir, 'checkpoints'));
    await run();
    expect(await model()).toBe('resumed=True big=False\n');
    expect(stageOf(await run(), 'train').status).toBe('cached');

    await rm(path.join(repo.dir, 'checkpoints'), { recursive: true });
    const fresh = await run();
    expect(stageOf(fresh, 'train')).toMatchObject({ status: 'ran', reasons: ['checkpoints was removed'] });
    expect(await model()).toBe('resumed=False big=False\n');

    await writeFile(path.join(repo.dir, 'blob.bin'), 'abcdef');
    const grown = await run();
    expect(stageOf(grown, 'train')).toMatchObject({ status: 'ran', reasons: ['blob.bin changed'] });
    expect(await model()).toBe('resumed=False big=True\n');
    await expectEqualsUncached();
  },
  SLOW,
);

test(
  'what a stage only looked up keeps it cached while it holds: the folder of its outs, made by it, does not count',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/results/\n',
        'fluksio.yml': PIPELINE,
        'train.py': `import os
os.makedirs("results/sub", exist_ok=True)
print(os.path.exists("README.md"))
open("results/model.txt", "w").write("made\\n")
`,
        'README.md': 'read me\n',
      },
    });
    await run();
    await repo.write('NOTES.md', 'notes\n');
    expect(stageOf(await run(), 'train').status).toBe('cached');
    // The results folder goes with its out: restoring the out makes it again.
    await rm(path.join(repo.dir, 'results'), { recursive: true });
    expect(stageOf(await run(), 'train').status).toBe('cached');
    expect(await model()).toBe('made\n');
  },
  SLOW,
);

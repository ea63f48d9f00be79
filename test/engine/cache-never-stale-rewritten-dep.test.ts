import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';
import { waitFor } from '../helpers/wait-for.js';

/** The stage's two waits and fluksio's runs on a loaded 2-core machine need the room. */
const SLOW = 240_000;

let repo: TestRepo;
afterEach(() => repo?.cleanup());

/** Waits, in the stage, until the test creates `file`. */
const waitUntilCreated = (file: string) => `while [ ! -e ${file} ]; do sleep 0.02; done`;

test(
  'a dep edited and put back while its stage ran leaves the result uncached: the next run re-runs it',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/out.txt\n*.signal\n',
        'data.csv': 'committed\n',
        // It reads its dep between two signals, so the test can edit the dep before the read
        // and put it back after: the key then says "committed", the stage read "edited".
        'fluksio.yml': `version: 1
stages:
  train:
    cmd: >-
      touch started.signal; ${waitUntilCreated('read.signal')};
      cat data.csv > out.txt; touch done-reading.signal; ${waitUntilCreated('end.signal')}
    deps: [data.csv]
    outs: [out.txt]
    code: false
    timeout: 3m
`,
      },
    });
    const running = runJson([], { cwd: repo.dir });
    await waitFor('train to start', () => existsSync(join(repo.dir, 'started.signal')), 120_000);
    await repo.write('data.csv', 'edited\n');
    await writeFile(join(repo.dir, 'read.signal'), '');
    await waitFor('train to read', () => existsSync(join(repo.dir, 'done-reading.signal')), 120_000);
    await repo.git('checkout', '--', 'data.csv');
    await writeFile(join(repo.dir, 'end.signal'), '');
    const { code, report } = await running;
    expect(code).toBe(0);
    expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('edited\n');
    expect(stageOf(report, 'train')).toMatchObject({
      status: 'ran',
      dirtyReasons: ['data.csv was rewritten while train ran'],
    });
    expect(report.run.dirty).toBe(true);

    const next = await runJson([], { cwd: repo.dir });
    expect(stageOf(next.report, 'train').status).toBe('ran');
    expect(await readFile(join(repo.dir, 'out.txt'), 'utf8')).toBe('committed\n');
    const twin = await runUncachedTwin({ dir: repo.dir, outputs: ['out.txt'] });
    expect(await snapshotPaths(repo.dir, ['out.txt'])).toEqual(twin.outputs);
  },
  SLOW,
);

import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';

const exec = promisify(execFile);
/** Several runs of a stage starting Python through a shell shim: room for a loaded 2-core machine. */
const SLOW = 240_000;

let scratch: string;
let env: Record<string, string>;
beforeAll(async () => {
  scratch = await realpath(await mkdtemp(join(tmpdir(), 'fluksio-launcher-cd-')));
  // Two interpreters a version manager chooses between: virtual environments, so sys.prefix tells them apart.
  for (const version of ['a', 'b']) {
    await exec('python3', ['-m', 'venv', '--without-pip', join(scratch, 'versions', version)]);
  }
  const bin = join(scratch, 'shims');
  await mkdir(bin);
  // What pyenv's shim does: `.python-version` is looked for from the current directory upward.
  await writeFile(
    join(bin, 'python3'),
    [
      '#!/bin/sh',
      'd=$PWD',
      'while [ ! -f "$d/.python-version" ] && [ "$d" != / ]; do d=$(dirname "$d"); done',
      'version=$(cat "$d/.python-version" 2>/dev/null || echo a)',
      `exec "${scratch}/versions/$version/bin/python3" "$@"`,
      '',
    ].join('\n'),
  );
  await chmod(join(bin, 'python3'), 0o755);
  env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
}, SLOW);
afterAll(() => rm(scratch, { recursive: true, force: true }));

let repo: TestRepo | undefined;
afterEach(async () => {
  await repo?.cleanup();
  repo = undefined;
});

const MAKE_PY = 'import os, sys\nopen("out.txt", "w").write(os.path.basename(sys.prefix) + "\\n")\n';

/** Runs the pipeline with sub/.python-version (ignored by git, as `pyenv local` files often are) at a, then at b: the stage must re-run, naming what changed. */
async function expectSwitchReruns(dir: string, reason: string): Promise<void> {
  const first = await runJson([], { cwd: dir, env });
  expect(first.code, first.stderr).toBe(0);
  expect(stageOf(first.report, 'make').status).toBe('ran');
  expect(await readFile(join(dir, 'sub/out.txt'), 'utf8')).toBe('a\n');

  // `pyenv local b` in the folder the stage changes to: the same launcher and PATH, another interpreter.
  await writeFile(join(dir, 'sub/.python-version'), 'b\n');
  const switched = await runJson([], { cwd: dir, env });
  expect(switched.code, switched.stderr).toBe(0);
  expect(stageOf(switched.report, 'make')).toMatchObject({ status: 'ran', reasons: [reason] });
  expect(await readFile(join(dir, 'sub/out.txt'), 'utf8')).toBe('b\n');

  await writeFile(join(dir, 'sub/.python-version'), 'a\n');
  const back = await runJson([], { cwd: dir, env });
  expect(stageOf(back.report, 'make')).toMatchObject({ status: 'cached', cachedFrom: first.report.run.id });
  expect(await readFile(join(dir, 'sub/out.txt'), 'utf8')).toBe('a\n');
}

test(
  'a stage that changes folder before starting a python3 launcher is keyed on what the launcher starts there',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/sub/out.txt\n.python-version\n',
        '.python-version': 'a\n',
        'sub/.python-version': 'a\n',
        'fluksio.yml':
          'version: 1\nstages:\n  make:\n    cmd: cd sub && python3 make.py\n    outs: [sub/out.txt]\n',
        'sub/make.py': MAKE_PY,
      },
    });
    await expectSwitchReruns(
      repo.dir,
      `python3 (what its launcher starts in sub) is now ${scratch}/versions/b/bin/python3 (was ${scratch}/versions/a/bin/python3)`,
    );
  },
  SLOW,
);

test(
  'a DVC stage with a wdir is keyed on what its python3 launcher starts in that wdir',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/sub/out.txt\n.python-version\n',
        '.python-version': 'a\n',
        'sub/.python-version': 'a\n',
        'dvc.yaml': 'stages:\n  make:\n    wdir: sub\n    cmd: python3 make.py\n    outs: [out.txt]\n',
        'sub/make.py': MAKE_PY,
      },
    });
    await expectSwitchReruns(
      repo.dir,
      `python3 (what its launcher starts in sub) is now ${scratch}/versions/b/bin/python3 (was ${scratch}/versions/a/bin/python3)`,
    );
  },
  SLOW,
);

test(
  'a stage that makes the folder it changes to is keyed on what the launcher starts where that folder is made',
  async () => {
    repo = await makeRepo({
      files: {
        '.gitignore': '/build/\n.python-version\n',
        '.python-version': 'a\n',
        'fluksio.yml':
          'version: 1\nstages:\n  make:\n    cmd: mkdir -p build && cd build && python3 ../make.py\n    outs: [build/out.txt]\n',
        'make.py': MAKE_PY,
      },
    });
    const dir = repo.dir;
    const first = await runJson([], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(await readFile(join(dir, 'build/out.txt'), 'utf8')).toBe('a\n');
    // A fresh checkout (no build/) where `pyenv local b` was run: b must make the output.
    await rm(join(dir, 'build'), { recursive: true });
    await writeFile(join(dir, '.python-version'), 'b\n');
    const switched = await runJson([], { cwd: dir, env });
    expect(switched.code, switched.stderr).toBe(0);
    expect(stageOf(switched.report, 'make').status).toBe('ran');
    expect(await readFile(join(dir, 'build/out.txt'), 'utf8')).toBe('b\n');
  },
  SLOW,
);

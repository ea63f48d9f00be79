import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, expect, test } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';
import { runJson, stageOf } from '../helpers/run-cli.js';
import { runUncachedTwin, snapshotPaths } from '../helpers/uncached-twin.js';

const exec = promisify(execFile);
/** Two virtual environments, several runs and an uncached twin: room for a loaded 2-core machine. */
const SLOW = 240_000;

let repo: TestRepo | undefined;
let scratch: string | undefined;
afterEach(async () => {
  await repo?.cleanup();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test(
  'a python3 launcher (as pyenv’s shim) that picks another interpreter from .python-version re-runs a traced stage, naming it',
  async () => {
    scratch = await realpath(await mkdtemp(join(tmpdir(), 'fluksio-launcher-')));
    // Two interpreters a version manager chooses between: virtual environments, so sys.prefix tells them apart.
    for (const version of ['a', 'b']) {
      await exec('python3', ['-m', 'venv', '--without-pip', join(scratch, 'versions', version)]);
    }
    const bin = join(scratch, 'shims');
    await exec('mkdir', [bin]);
    // What pyenv's shim does: the interpreter is named by a file the shell reads, never by Python.
    await writeFile(
      join(bin, 'python3'),
      `#!/bin/sh\nversion=$(cat .python-version 2>/dev/null || echo a)\nexec "${scratch}/versions/$version/bin/python3" "$@"\n`,
    );
    await chmod(join(bin, 'python3'), 0o755);
    const env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
    repo = await makeRepo({
      files: {
        '.gitignore': '/out.txt\n',
        '.python-version': 'a\n',
        'fluksio.yml': 'version: 1\nstages:\n  make:\n    cmd: python3 make.py\n    outs: [out.txt]\n',
        'make.py': 'import os, sys\nopen("out.txt", "w").write(os.path.basename(sys.prefix) + "\\n")\n',
      },
    });
    const dir = repo.dir;
    const first = await runJson([], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(stageOf(first.report, 'make').status).toBe('ran');
    expect(await readFile(join(dir, 'out.txt'), 'utf8')).toBe('a\n');
    const again = await runJson([], { cwd: dir, env });
    expect(stageOf(again.report, 'make').status).toBe('cached');

    // `pyenv local b`: the same launcher, the same PATH, another interpreter.
    await writeFile(join(dir, '.python-version'), 'b\n');
    const switched = await runJson([], { cwd: dir, env });
    expect(switched.code, switched.stderr).toBe(0);
    expect(stageOf(switched.report, 'make')).toMatchObject({
      status: 'ran',
      reasons: [
        `python3 (what its launcher starts) is now ${scratch}/versions/b/bin/python3 (was ${scratch}/versions/a/bin/python3)`,
      ],
    });
    expect(await readFile(join(dir, 'out.txt'), 'utf8')).toBe('b\n');
    const twin = await runUncachedTwin({ dir, outputs: ['out.txt'], env });
    expect(await snapshotPaths(dir, ['out.txt'])).toEqual(twin.outputs);

    // Back to the first: its result is found again.
    await writeFile(join(dir, '.python-version'), 'a\n');
    const back = await runJson([], { cwd: dir, env });
    expect(stageOf(back.report, 'make')).toMatchObject({ status: 'cached', cachedFrom: first.report.run.id });
    expect(await readFile(join(dir, 'out.txt'), 'utf8')).toBe('a\n');
  },
  SLOW,
);

test(
  'a launcher is asked once per run, however many stages start it, and leaves nothing in .fluksio/',
  async () => {
    scratch = await realpath(await mkdtemp(join(tmpdir(), 'fluksio-launcher-')));
    const bin = join(scratch, 'shims');
    await exec('mkdir', [bin]);
    const asked = join(scratch, 'asked.log');
    // A shim that notes each time fluksio asks it which interpreter it starts, then starts it.
    await writeFile(
      join(bin, 'python3'),
      `#!/bin/sh\ncase "$*" in *fluksio-launched-python*) echo asked >> "${asked}" ;; esac\nexec "$(command -v -p python3 || echo /usr/bin/python3)" "$@"\n`,
    );
    await chmod(join(bin, 'python3'), 0o755);
    const env = { PATH: `${bin}:${process.env.PATH ?? ''}` };
    repo = await makeRepo({
      files: {
        '.gitignore': '/a.txt\n/b.txt\n/c.txt\n',
        'fluksio.yml': [
          'version: 1',
          'params:',
          '  n: { type: int, default: 1 }',
          'stages:',
          "  a: { cmd: \"python3 -c \\\"open('a.txt', 'w').write('${n}')\\\"\", outs: [a.txt], params: [n] }",
          "  b: { cmd: \"python3 -c \\\"open('b.txt', 'w').write(open('a.txt').read())\\\"\", deps: [a.txt], outs: [b.txt] }",
          "  c: { cmd: \"python3 -c \\\"open('c.txt', 'w').write(open('b.txt').read())\\\"\", deps: [b.txt], outs: [c.txt] }",
          '',
        ].join('\n'),
      },
    });
    const askedTimes = async () =>
      (await readFile(asked, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    const leftovers = async () =>
      (await exec('ls', ['-A', join(repo?.dir ?? '', '.fluksio')])).stdout
        .split('\n')
        .filter((name) => /^(launcher|run)-/.test(name));

    const first = await runJson([], { cwd: repo.dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.report.stages.map((stage) => stage.status)).toEqual(['ran', 'ran', 'ran']);
    expect(await askedTimes()).toBe(1);
    const again = await runJson([], { cwd: repo.dir, env });
    expect(again.report.stages.map((stage) => stage.status)).toEqual(['cached', 'cached', 'cached']);
    expect(await askedTimes()).toBe(2);
    // A sweep run one member at a time asks again for each member: a member's stages may
    // have changed what the shim reads.
    const sweep = await exec(process.execPath, [join(process.cwd(), 'bin', 'fluksio.js'), 'run', 'n=2,3'], {
      cwd: repo.dir,
      env: { ...process.env, ...env },
    });
    expect(sweep.stdout).toContain('run 2 of 2');
    expect(await askedTimes()).toBe(4);
    expect(await leftovers()).toEqual([]);
  },
  SLOW,
);

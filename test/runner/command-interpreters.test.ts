import {
  chmod,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { commandInterpreters, commandWords } from '../../runner/keys/command-interpreters.js';
import { commandPrograms } from '../../runner/keys/command-programs.js';
import { InterpreterDigests } from '../../runner/keys/interpreter-digests.js';
import { sha256Hex } from '../../core/canonical-json.js';

describe('the programs a command line starts', () => {
  test.each([
    ['python3 train.py --lr 0.1', ['python3']],
    ['FOO=1 env -i A=b python3 train.py', ['python3']],
    ['cd sub && python train.py | tee log.txt; ./run.sh > out.txt 2>&1', ['python', 'tee', './run.sh']],
    ['echo hi > f && test -f f || exit 1', []],
    ['(nohup Rscript fit.R) && time -p node x.js && nice -n 5 make', ['Rscript', 'node', 'nice']],
    ['$PYTHON train.py', []],
    ['python3 a.py && python3 b.py', ['python3', 'python3']],
    // A script of several lines (`cmd: |`): each line's program, comments and continuations as sh reads them.
    [
      '# set up\npython3 prepare.py\nnode report.js # then the report\nRscript plot.R',
      ['python3', 'node', 'Rscript'],
    ],
    ['python3 train.py \\\n  --lr 0.1 &&\n  node report.js', ['python3', 'node']],
    ["python3 -c 'import a\nimport b' && node q.js", ['python3', 'node']],
    // A `#` inside a word is no comment; an escaped backslash ends no line.
    ['pip install git+https://github.com/x/y#egg=y && python3 train.py', ['pip', 'python3']],
    ['echo a#b; python3 x.py', ['python3']],
    ['echo a\\\\\npython3 x.py', ['python3']],
    ['echo \'# not a comment\' "#nor this" && node x.js # but this: ruby', ['node']],
    ['python3 a.py\r\nnode b.js\r\n', ['python3', 'node']],
    // After the keywords that read a command.
    [
      'if python3 check.py; then node run.js; elif ruby r.rb; then perl p.pl; else lua l.lua; fi',
      ['python3', 'node', 'ruby', 'perl', 'lua'],
    ],
    [
      'while python3 more.py; do node step.js; done; until ! make; do sleep 1; done',
      ['python3', 'node', 'make', 'sleep'],
    ],
  ])('%s', (cmd, words) => {
    expect(commandWords(cmd)).toEqual(words);
  });
});

test('a long script is read in one pass: every line, comments and all', () => {
  const script = `python3 a.py\n${'# a comment\n'.repeat(20_000)}node b.js`;
  expect(commandWords(script)).toEqual(['python3', 'node']);
});

describe('the folder each program starts in', () => {
  test.each([
    [
      'python3 a.py && ./run.sh',
      [
        ['python3', '.'],
        ['./run.sh', '.'],
      ],
    ],
    ['cd sub && python3 make.py', [['python3', 'sub']]],
    [
      "cd 'sub' && { python3 make.py && ./eval.sh; }",
      [
        ['python3', 'sub'],
        ['./eval.sh', 'sub'],
      ],
    ],
    [
      'cd a; cd ../b/ && x; cd .. && y',
      [
        ['x', 'b'],
        ['y', '.'],
      ],
    ],
    ['cd /opt/tools && x', [['x', '/opt/tools']]],
    ['cd sub || exit 1; x', [['x', 'sub']]],
    [
      '(cd sub && x) && y',
      [
        ['x', 'sub'],
        ['y', '.'],
      ],
    ],
    [
      'cd sub | x; y',
      [
        ['x', '.'],
        ['y', '.'],
      ],
    ],
    ['cd sub & x', [['x', '.']]],
    ['cd sub && { cd deeper; } && x', [['x', 'sub/deeper']]],
    // Not known for sure: as before folders were followed.
    [
      'make && cd sub; x',
      [
        ['make', '.'],
        ['x', '.'],
      ],
    ],
    [
      'cd sub && x || y',
      [
        ['x', 'sub'],
        ['y', 'sub'],
      ],
    ],
    ['test -d sub && cd sub; x', [['x', '.']]],
    ['cd sub; x', [['x', 'sub']]],
    [
      'cd && x; cd - && y; cd ~/w && z',
      [
        ['x', '.'],
        ['y', '.'],
        ['z', '.'],
      ],
    ],
    [
      'cd "$WORK" && x; cd s* && y; cd -P sub && z',
      [
        ['x', '.'],
        ['y', '.'],
        ['z', '.'],
      ],
    ],
    ['eval "cd sub"; cd a && x', [['x', '.']]],
    ['cd sub && command cd deeper && x', [['x', '.']]],
    ['x=$(cd sub; pwd) && y', [['y', '.']]],
    [
      'f() { cd sub; }; f && x',
      [
        ['f', '.'],
        ['f', '.'],
        ['x', '.'],
      ],
    ],
  ])('%s', (cmd, programs) => {
    expect(commandPrograms(cmd).map(({ word, dir }) => [word, dir])).toEqual(programs);
  });
});

describe('interpreters as keyed', () => {
  let dir: string;
  let repoRoot: string;
  let bin: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'fluksio-interp-')));
    repoRoot = join(dir, 'repo');
    bin = join(dir, 'bin');
    await mkdir(repoRoot);
    await mkdir(bin);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function program(path: string, text: string): Promise<void> {
    await writeFile(path, text);
    await chmod(path, 0o755);
  }

  test('a program is found on the given PATH, by its real path and the digest of its bytes', async () => {
    await program(join(bin, 'tool-1.0'), '#!/bin/sh\necho 1\n');
    await symlink(join(bin, 'tool-1.0'), join(bin, 'tool'));
    const found = await commandInterpreters('tool x && missing-tool y', {
      path: bin,
      cwd: repoRoot,
      repoRoot,
      digests: new InterpreterDigests(null),
    });
    expect(found).toEqual({
      tool: { path: join(bin, 'tool-1.0'), digest: `sha256:${sha256Hex('#!/bin/sh\necho 1\n')}` },
      '/bin/sh': { path: await realpath('/bin/sh'), digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
      'missing-tool': null,
    });
  });

  test("a script in the repository is code: only its #! interpreter is keyed, found on the stage's PATH", async () => {
    await program(join(bin, 'python3'), 'not really python');
    await program(join(repoRoot, 'train.py'), '#!/usr/bin/env -S python3 -u\nprint(1)\n');
    const found = await commandInterpreters('./train.py', {
      path: bin,
      cwd: repoRoot,
      repoRoot,
      digests: new InterpreterDigests(null),
    });
    expect(found).toEqual({
      python3: { path: join(bin, 'python3'), digest: `sha256:${sha256Hex('not really python')}` },
    });
  });
  test('a launcher script named python is asked which Python it starts; one inside the repository never is', async () => {
    await program(join(bin, 'python3'), '#!/bin/sh\nexec /usr/bin/python3 "$@"\n');
    await mkdir(join(repoRoot, 'py'));
    await program(join(repoRoot, 'py', 'python3'), '#!/bin/sh\ntouch started\n');
    await program(join(repoRoot, 'train.py'), '#!py/python3\nprint(1)\n');
    await program(join(repoRoot, 'eval.py'), '#!/usr/bin/env python3\nprint(1)\n');
    const asked: string[] = [];
    const found = await commandInterpreters('python3 a.py && ./train.py && ./eval.py', {
      path: bin,
      cwd: repoRoot,
      repoRoot,
      digests: new InterpreterDigests(null),
      probeLauncher: (launcher) => {
        asked.push(launcher);
        return Promise.resolve({ executable: '/venvs/b/bin/python3', realPath: '/bin/sh' });
      },
    });
    expect(asked).toEqual([join(bin, 'python3')]);
    expect(found).toMatchObject({
      'python3 (what its launcher starts)': { path: '/venvs/b/bin/python3', digest: expect.any(String) },
    });
    expect(found).not.toHaveProperty(['py/python3 (what its launcher starts)']);
  });
  test('a program started after a cd is found, and its launcher asked, in that folder', async () => {
    await program(join(bin, 'python3'), '#!/bin/sh\nexec /usr/bin/python3 "$@"\n');
    await mkdir(join(repoRoot, 'sub'));
    await program(join(repoRoot, 'sub', 'run.sh'), '#!/usr/bin/env python3\nprint(1)\n');
    const asked: string[][] = [];
    const found = await commandInterpreters('python3 a.py && cd sub && ./run.sh && python3 b.py', {
      path: bin,
      cwd: repoRoot,
      repoRoot,
      digests: new InterpreterDigests(null),
      probeLauncher: (launcher, cwd) => {
        asked.push([launcher, cwd]);
        return Promise.resolve({ executable: `/venvs/${cwd}/bin/python3`, realPath: '/bin/sh' });
      },
    });
    expect(asked).toEqual([
      [join(bin, 'python3'), repoRoot],
      [join(bin, 'python3'), join(repoRoot, 'sub')],
      [join(bin, 'python3'), join(repoRoot, 'sub')],
    ]);
    expect(Object.keys(found).sort()).toEqual([
      '/bin/sh',
      'python3',
      'python3 (what its launcher starts in sub)',
      'python3 (what its launcher starts)',
    ]);
    expect(found).toMatchObject({
      'python3 (what its launcher starts)': { path: `/venvs/${repoRoot}/bin/python3` },
      'python3 (what its launcher starts in sub)': { path: `/venvs/${join(repoRoot, 'sub')}/bin/python3` },
    });
  });

  test('a relative program after a cd is the one in that folder', async () => {
    await mkdir(join(dir, 'tools'));
    await program(join(dir, 'tools', 'tool'), '#!/bin/sh\necho 1\n');
    await program(join(repoRoot, 'tool'), '#!/bin/sh\necho other\n');
    const found = await commandInterpreters('cd ../tools && ./tool', {
      path: bin,
      cwd: repoRoot,
      repoRoot,
      digests: new InterpreterDigests(null),
    });
    expect(found).toMatchObject({
      '../tools/tool': {
        path: join(dir, 'tools', 'tool'),
        digest: `sha256:${sha256Hex('#!/bin/sh\necho 1\n')}`,
      },
    });
  });
});

describe('remembered digests', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'fluksio-digests-')));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  test('a file is read again when its bytes may have changed, even with its mtime put back', async () => {
    const file = join(dir, 'python3');
    const memory = join(dir, 'digests.json');
    await writeFile(file, 'version 1');
    const first = new InterpreterDigests(memory);
    expect(await first.digestOf(file)).toBe(`sha256:${sha256Hex('version 1')}`);
    await first.save();
    expect(JSON.parse(await readFile(memory, 'utf8'))).toHaveProperty([file]);

    // Another run trusts what was remembered for an unchanged file, without reading it.
    const remembered = JSON.parse(await readFile(memory, 'utf8')) as Record<string, { digest: string }>;
    remembered[file] = { ...remembered[file]!, digest: 'sha256:remembered' };
    await writeFile(memory, JSON.stringify(remembered));
    expect(await new InterpreterDigests(memory).digestOf(file)).toBe('sha256:remembered');

    const before = await stat(file);
    await writeFile(file, 'version 2');
    await utimes(file, before.atime, before.mtime);
    expect(await new InterpreterDigests(memory).digestOf(file)).toBe(`sha256:${sha256Hex('version 2')}`);
  });

  test('a damaged file of remembered digests is ignored', async () => {
    const memory = join(dir, 'digests.json');
    await writeFile(memory, '{"cut sho');
    await writeFile(join(dir, 'tool'), 'bytes');
    expect(await new InterpreterDigests(memory).digestOf(join(dir, 'tool'))).toBe(
      `sha256:${sha256Hex('bytes')}`,
    );
  });
});

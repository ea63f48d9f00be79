import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { whyNotPython } from '../../runner/keys/why-not-python.js';

let bin: string;
beforeAll(async () => {
  bin = await mkdtemp(path.join(tmpdir(), 'fluksio-bin-'));
  for (const name of ['python3.11', 'node', 'cat']) {
    await writeFile(path.join(bin, name), '#!/bin/sh\n');
    await chmod(path.join(bin, name), 0o755);
  }
  await symlink('python3.11', path.join(bin, 'python3'));
  await symlink('python3.11', path.join(bin, 'py'));
});
afterAll(async () => {
  await rm(bin, { recursive: true, force: true });
});

describe('whether a command can be traced as Python', () => {
  test.each([
    ["python3 train.py --lr '0.5'", null],
    ['py train.py', null],
    ['PYTHONHASHSEED=0 python3 train.py 2>&1 > log.txt', null],
    ['node build.js', 'node is not Python'],
    ['python3 a.py && node b.js', 'the shell runs it (&&)'],
    ['python3 a.py | cat', 'the shell runs it (|)'],
    ['python3 a.py < input.csv', 'the shell runs it (<)'],
    ['python3 $(cat which.txt)', 'the shell runs a subshell or $(…)'],
    ['python3 train.py "$(cat VERSION)"', 'the shell runs a command substitution $(…) or `…`'],
    ['python3 train.py "${V:-$(cat VERSION)}"', 'the shell runs a command substitution $(…) or `…`'],
    ['python3 train.py `cat VERSION`', 'the shell runs a command substitution $(…) or `…`'],
    ['python3 train.py ${V:-$(cat VERSION)}', 'the shell expands something fluksio cannot read'],
    ['python3 train.py "`cat VERSION`"', 'the shell runs a command substitution $(…) or `…`'],
    ['python3 train.py --note "$HOME"', null],
    ['python3 train.py # a note', null],
    ['python3 *.py', 'the shell expands a glob'],
    ['python3 train.py data/part[0-9].csv', 'the shell expands a glob'],
    ['python3 train.py data/[!a]"x".csv', 'the shell expands a glob'],
    ['python3 train.py \'[1,2]\' "x[0]" data/\\[1\\].csv', null],
    ['python3 train.py [ # [a]', null],
    ['$PY train.py', 'its program $PY is a shell expansion'],
    ['python9 train.py', 'python9 was not found'],
    ['X=1', 'it starts no program'],
  ])('%s', async (cmd, expected) => {
    expect(await whyNotPython(cmd, { cwd: bin, path: bin })).toBe(expected);
  });
});

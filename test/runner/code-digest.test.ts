import { createHash } from 'node:crypto';
import { mkdtemp, realpath, rm, symlink, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { codeDigest, describeCodeChanges, type CodeScope } from '../../runner/keys/code-digest.js';
import { readCodeIndex } from '../../runner/keys/code-index.js';
import { UnsafePathError } from '../../runner/workspace/unsafe-path-error.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

const repos: TestRepo[] = [];
async function repo(files: Record<string, string>): Promise<TestRepo> {
  const made = await makeRepo({ files });
  repos.push(made);
  return made;
}
afterEach(async () => {
  await Promise.all(repos.splice(0).map((made) => made.cleanup()));
});

const EVERYTHING: CodeScope = { pipelineDir: '', include: null, exclude: [] };

async function digestOf(made: TestRepo, scope: CodeScope = EVERYTHING): Promise<string> {
  return codeDigest(await readCodeIndex(made.dir), scope).digest;
}

async function pathsIn(made: TestRepo, scope: CodeScope): Promise<string[]> {
  return codeDigest(await readCodeIndex(made.dir), scope).entries.map(([file]) => file);
}

describe('codeDigest', () => {
  test('an untracked module changes the digest; an ignored file and __pycache__/x.pyc do not', async () => {
    const made = await repo({ 'train.py': 'import helpers\n', '.gitignore': 'scratch/\n' });
    const committed = await digestOf(made);
    await made.write('scratch/notes.py', 'ignored\n');
    await made.write('__pycache__/x.pyc', 'bytecode');
    await made.write('pkg/__pycache__/helpers.cpython-312.pyc', 'bytecode');
    expect(await digestOf(made)).toBe(committed);
    await made.write('helpers.py', 'def f(): pass\n');
    expect(await digestOf(made)).not.toBe(committed);
  });

  test('a committed edit and an uncommitted edit both change it; undoing the uncommitted one restores it', async () => {
    const made = await repo({ 'train.py': 'v1\n', 'data.csv': 'a,b\n' });
    const first = await digestOf(made);
    await made.write('train.py', 'v2\n');
    await made.commitAll('v2');
    const second = await digestOf(made);
    expect(second).not.toBe(first);
    await made.write('train.py', 'v3, not committed\n');
    expect(await digestOf(made)).not.toBe(second);
    await made.write('train.py', 'v2\n');
    expect(await digestOf(made)).toBe(second);
  });

  test('touching a file without changing it changes nothing', async () => {
    const made = await repo({ 'train.py': 'v1\n' });
    const before = await digestOf(made);
    const later = new Date(Date.now() + 60_000);
    await utimes(path.join(made.dir, 'train.py'), later, later);
    const index = await readCodeIndex(made.dir);
    expect(index.changed.size).toBe(0);
    expect(codeDigest(index, EVERYTHING).digest).toBe(before);
  });

  test('is the sha256 of the sorted "path\\0mode blobid\\n" lines', async () => {
    const made = await repo({ 'b.py': 'b\n', 'a/z.py': 'z\n' });
    const { digest, entries } = codeDigest(await readCodeIndex(made.dir), EVERYTHING);
    const ids = await Promise.all(
      ['a/z.py', 'b.py'].map(async (file) => `100644 ${(await made.git('hash-object', file)).trim()}`),
    );
    expect(entries).toEqual([
      ['a/z.py', ids[0]],
      ['b.py', ids[1]],
    ]);
    const lines = `a/z.py\0${ids[0]}\nb.py\0${ids[1]}\n`;
    expect(digest).toBe(createHash('sha256').update(lines).digest('hex'));
  });

  test('code globs are relative to the pipeline directory and "/" anchors them at the root', async () => {
    const made = await repo({
      'ml/fluksio.yml': 'version: 1\n',
      'ml/train.py': 't\n',
      'ml/models/.hidden/net.py': 'n\n',
      'shared/util.py': 'u\n',
      'top.py': 't\n',
      'requirements.txt': 'numpy\n',
      'ml/requirements.txt': 'not this one\n',
    });
    const scope = (include: string[]): CodeScope => ({ pipelineDir: 'ml', include, exclude: [] });
    expect(await pathsIn(made, scope(['**/*.py', '/requirements.txt']))).toEqual([
      'ml/models/.hidden/net.py',
      'ml/train.py',
      'requirements.txt',
    ]);
    expect(await pathsIn(made, scope(['../shared/*.py', '/*.py']))).toEqual(['shared/util.py', 'top.py']);
    expect(await pathsIn(made, scope([]))).toEqual([]);
  });

  test('at the root, globs match from the root', async () => {
    const made = await repo({ 'train.py': 't\n', 'sub/x.py': 'x\n', 'README.md': 'r\n' });
    const scope: CodeScope = { pipelineDir: '', include: ['*.py'], exclude: [] };
    expect(await pathsIn(made, scope)).toEqual(['train.py']);
  });

  test('leaves out the stage deps and everything under a directory out', async () => {
    const made = await repo({
      'train.py': 't\n',
      'data/raw.csv': 'r\n',
      'data/other.csv': 'o\n',
      'models/a.bin': 'a',
      'models/b/c.bin': 'c',
      'models2/keep.py': 'k\n',
    });
    const scope: CodeScope = { pipelineDir: '', include: null, exclude: ['data/raw.csv', 'models/'] };
    expect(await pathsIn(made, scope)).toEqual(['data/other.csv', 'models2/keep.py', 'train.py']);
    const globbed: CodeScope = { pipelineDir: '', include: ['**/*'], exclude: ['models'] };
    expect(await pathsIn(made, globbed)).not.toContain('models/b/c.bin');
  });

  test('a symlink leading outside the repository is refused when in scope, and only then', async () => {
    const outside = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-outside-')));
    try {
      const made = await repo({ 'train.py': 't\n' });
      await symlink(path.join(outside, 'shared.py'), path.join(made.dir, 'shared.py'));
      const index = await readCodeIndex(made.dir);
      expect(() => codeDigest(index, EVERYTHING)).toThrow(UnsafePathError);
      expect(() => codeDigest(index, EVERYTHING)).toThrow('Copy the target into the repository');
      expect(codeDigest(index, { ...EVERYTHING, include: ['train.py'] }).entries).toHaveLength(1);
      expect(codeDigest(index, { ...EVERYTHING, exclude: ['shared.py'] }).entries).toHaveLength(1);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  test('a change outside the scope leaves the digest alone', async () => {
    const made = await repo({ 'ml/train.py': 't\n', 'docs/index.md': 'd\n' });
    const scope: CodeScope = { pipelineDir: 'ml', include: ['**/*.py'], exclude: [] };
    const before = await digestOf(made, scope);
    await made.write('docs/index.md', 'edited\n');
    await made.write('docs/conf.py', 'new\n');
    expect(await digestOf(made, scope)).toBe(before);
  });
});

describe('describeCodeChanges', () => {
  const before: [string, string][] = [
    ['features.py', 'f1'],
    ['helpers.py', 'h1'],
    ['old.py', 'o1'],
    ['same.py', 's1'],
  ];

  test.each<[string, [string, string][], number, string[]]>([
    ['nothing differs', before, 5, []],
    [
      'changed, then added, then removed',
      [
        ['features.py', 'f2'],
        ['helpers.py', 'h2'],
        ['new.py', 'n1'],
        ['same.py', 's1'],
      ],
      5,
      ['features.py changed', 'helpers.py changed', 'new.py added', 'old.py removed'],
    ],
    [
      'beyond the limit the rest are counted',
      [
        ['a.py', '1'],
        ['b.py', '2'],
        ['c.py', '3'],
      ],
      2,
      ['a.py added', 'b.py added', 'and 5 more files'],
    ],
    [
      'one more file is singular',
      [
        ['features.py', 'f1'],
        ['helpers.py', 'h1'],
        ['old.py', 'o1'],
      ],
      0,
      ['and 1 more file'],
    ],
  ])('%s', (_name, after, limit, expected) => {
    expect(describeCodeChanges(before, after, limit)).toEqual(expected);
  });

  test('a change of mode alone names both modes', () => {
    expect(
      describeCodeChanges(
        [
          ['gen.sh', '100755 a1'],
          ['x.py', '100644 b1'],
        ],
        [
          ['gen.sh', '100644 a1'],
          ['x.py', '100755 b2'],
        ],
      ),
    ).toEqual(['gen.sh mode 100755 → 100644', 'x.py changed']);
  });
});

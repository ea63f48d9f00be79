import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { contentDigest } from '../../runner/keys/content-digest.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-content-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

async function write(relPath: string, content: string): Promise<void> {
  await mkdir(path.dirname(path.join(dir, relPath)), { recursive: true });
  await writeFile(path.join(dir, relPath), content);
}

describe('contentDigest', () => {
  test('a file is the sha256 of its bytes', async () => {
    await write('raw.csv', 'a,b\n1,2\n');
    expect(await contentDigest(path.join(dir, 'raw.csv'))).toEqual({
      kind: 'file',
      digest: `sha256:${sha256('a,b\n1,2\n')}`,
      size: 8,
      stamp: expect.any(String),
    });
  });

  test('a directory is the sha256 of its files\' sorted "relpath\\0digest\\n" lines', async () => {
    await write('data/b.csv', 'b');
    await write('data/a/x.csv', 'xx');
    const lines = `a/x.csv\0sha256:${sha256('xx')}\nb.csv\0sha256:${sha256('b')}\n`;
    expect(await contentDigest(path.join(dir, 'data'))).toEqual({
      kind: 'dir',
      digest: `sha256:${sha256(lines)}`,
      size: 3,
      stamp: expect.any(String),
    });
  });

  test("a file's executable bit is part of its digest, and of its directory's", async () => {
    await write('data/gen.sh', 'echo hi\n');
    const file = await contentDigest(path.join(dir, 'data/gen.sh'));
    const folder = await contentDigest(path.join(dir, 'data'));
    await chmod(path.join(dir, 'data/gen.sh'), 0o755);
    expect((await contentDigest(path.join(dir, 'data/gen.sh'))).digest).toBe(`100755 ${file.digest}`);
    expect((await contentDigest(path.join(dir, 'data'))).digest).not.toBe(folder.digest);
    await chmod(path.join(dir, 'data/gen.sh'), 0o644);
    expect(await contentDigest(path.join(dir, 'data'))).toEqual(folder);
  });

  test('an empty subdirectory is part of a directory\'s digest, as a "relpath/\\0\\n" line', async () => {
    await write('data/b.csv', 'b');
    const before = await contentDigest(path.join(dir, 'data'));
    await mkdir(path.join(dir, 'data/a/empty'), { recursive: true });
    const lines = `a/empty/\0\nb.csv\0sha256:${sha256('b')}\n`;
    expect(await contentDigest(path.join(dir, 'data'))).toEqual({
      kind: 'dir',
      digest: `sha256:${sha256(lines)}`,
      size: 1,
      stamp: expect.any(String),
    });
    expect((await contentDigest(path.join(dir, 'data'))).digest).not.toBe(before.digest);
  });

  test('a directory ignores bytecode and .fluksio, and mtimes', async () => {
    await write('data/a.csv', 'a');
    const before = await contentDigest(path.join(dir, 'data'));
    await write('data/__pycache__/m.cpython-312.pyc', 'x');
    await write('data/loose.pyc', 'x');
    await write('data/.fluksio/state', 'x');
    expect(await contentDigest(path.join(dir, 'data'))).toEqual(before);
    const later = new Date(Date.now() + 60_000);
    await utimes(path.join(dir, 'data/a.csv'), later, later);
    expect((await contentDigest(path.join(dir, 'data'))).digest).toBe(before.digest);
    await write('data/a.csv', 'changed');
    expect((await contentDigest(path.join(dir, 'data'))).digest).not.toBe(before.digest);
  });

  test('the stamp tells a file rewritten with the same bytes, and nothing else does', async () => {
    await write('data/a.csv', 'a');
    await write('data/__pycache__/m.cpython-312.pyc', 'x');
    const before = await contentDigest(path.join(dir, 'data'));
    await chmod(path.join(dir, 'data/a.csv'), 0o600);
    await write('data/__pycache__/m.cpython-312.pyc', 'changed');
    expect(await contentDigest(path.join(dir, 'data'))).toEqual(before);
    const later = new Date(Date.now() + 60_000);
    await utimes(path.join(dir, 'data/a.csv'), later, later);
    const rewritten = await contentDigest(path.join(dir, 'data'));
    expect(rewritten.digest).toBe(before.digest);
    expect(rewritten.stamp).not.toBe(before.stamp);
  });

  test('symlinks are followed to what a stage would read', async () => {
    await write('elsewhere/v2.csv', 'v2');
    await write('data/real.csv', 'r');
    await symlink(path.join(dir, 'elsewhere/v2.csv'), path.join(dir, 'data/current.csv'));
    const before = await contentDigest(path.join(dir, 'data'));
    await write('elsewhere/v2.csv', 'v2, edited');
    expect((await contentDigest(path.join(dir, 'data'))).digest).not.toBe(before.digest);
  });

  test('a symlink loop is an error naming it', async () => {
    await write('data/a.csv', 'a');
    await symlink('..', path.join(dir, 'data/up'));
    await expect(contentDigest(path.join(dir, 'data'))).rejects.toThrow('symlink loop');
  });

  test('a broken symlink in a directory is an error naming the link, its target and the fix', async () => {
    await write('data/a.csv', 'a');
    await symlink('gone.csv', path.join(dir, 'data/latest.csv'));
    await expect(contentDigest(path.join(dir, 'data'))).rejects.toThrow(
      `${path.join(dir, 'data/latest.csv')} is a symlink to gone.csv, which does not exist: ` +
        'a directory dep may hold only files and directories a stage can read; remove the link or make its target',
    );
  });

  test('a missing path is an error naming it', async () => {
    const missing = path.join(dir, 'nope.csv');
    await expect(contentDigest(missing)).rejects.toThrow(`${missing} does not exist`);
  });
});

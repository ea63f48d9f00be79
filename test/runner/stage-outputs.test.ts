import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { DirManifest } from '../../schemas/out-record.js';
import { BlobCorruptError } from '../../runner/blobs/blob-errors.js';
import { DiskBlobStore } from '../../runner/blobs/disk-blob-store.js';
import { MissingOutError } from '../../runner/blobs/missing-out-error.js';
import { removeOut, restoreOut, storeOut } from '../../runner/blobs/stage-outputs.js';
import { UnsafePathError } from '../../runner/workspace/unsafe-path-error.js';

let base: string;
let root: string;
let outside: string;
let blobs: DiskBlobStore;
beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-outs-')));
  root = path.join(base, 'workspace');
  outside = path.join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  blobs = new DiskBlobStore(path.join(base, 'store'));
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function write(relPath: string, content: string, mode = 0o644): Promise<void> {
  await mkdir(path.dirname(path.join(root, relPath)), { recursive: true });
  await writeFile(path.join(root, relPath), content);
  await chmod(path.join(root, relPath), mode);
}

const read = (relPath: string) => readFile(path.join(root, relPath), 'utf8');

describe('storeOut and restoreOut', () => {
  test('a file out comes back byte for byte after being removed', async () => {
    await write('model.bin', 'weights');
    const record = await storeOut(blobs, root, root, 'model.bin');
    expect(record).toMatchObject({ path: 'model.bin', kind: 'file', size: 7 });
    await removeOut(root, root, 'model.bin');
    await restoreOut(blobs, root, root, record);
    expect(await read('model.bin')).toBe('weights');
  });

  test('a file out comes back with its executable bit', async () => {
    await write('tool', '#!/bin/sh\n', 0o755);
    const record = await storeOut(blobs, root, root, 'tool');
    expect(record.executable).toBe(true);
    await removeOut(root, root, 'tool');
    await restoreOut(blobs, root, root, record);
    expect((await stat(path.join(root, 'tool'))).mode & 0o111).toBe(0o111);
    await write('plain', 'x');
    expect(await storeOut(blobs, root, root, 'plain')).not.toHaveProperty('executable');
  });

  test('a directory out keeps its empty directories; without any, its manifest is as before', async () => {
    await write('dist/a.txt', 'a');
    const plain = await storeOut(blobs, root, root, 'dist');
    expect(DirManifest.parse(JSON.parse((await blobs.getBytes(plain.digest)).toString()))).not.toHaveProperty(
      'dirs',
    );
    await mkdir(path.join(root, 'dist/logs'));
    await mkdir(path.join(root, 'dist/cache/tmp'), { recursive: true });
    const record = await storeOut(blobs, root, root, 'dist');
    const manifest = DirManifest.parse(JSON.parse((await blobs.getBytes(record.digest)).toString()));
    expect(manifest.dirs).toEqual(['cache/tmp', 'logs']);
    await removeOut(root, root, 'dist');
    await restoreOut(blobs, root, root, record);
    expect((await readdir(path.join(root, 'dist'))).sort()).toEqual(['a.txt', 'cache', 'logs']);
    expect(await readdir(path.join(root, 'dist/cache/tmp'))).toEqual([]);
  });

  test('a manifest whose empty directory climbs out is refused', async () => {
    await mkdir(path.join(root, 'dist/empty'), { recursive: true });
    const manifest: DirManifest = { version: 1, files: [], dirs: ['../../escaped'] };
    const { digest } = await blobs.putBytes(Buffer.from(JSON.stringify(manifest)));
    await expect(
      restoreOut(blobs, root, root, { path: 'dist', kind: 'dir', digest, size: 0 }),
    ).rejects.toThrow('expected a plain relative path');
    expect(await lstat(path.join(base, 'escaped')).catch(() => null)).toBeNull();
  });

  test('directory outs round-trip with their executable bits', async () => {
    await write('dist/run.sh', '#!/bin/sh\necho hi\n', 0o755);
    await write('dist/lib/data.txt', 'data');
    await mkdir(path.join(root, 'dist/empty'));
    const record = await storeOut(blobs, root, root, 'dist');
    const manifest = DirManifest.parse(JSON.parse((await blobs.getBytes(record.digest)).toString()));
    expect(manifest.files.map(({ path: file, executable, size }) => [file, executable, size])).toEqual([
      ['lib/data.txt', false, 4],
      ['run.sh', true, 18],
    ]);
    expect(record).toMatchObject({ kind: 'dir', size: 22 });

    await removeOut(root, root, 'dist');
    await restoreOut(blobs, root, root, record);
    expect(await read('dist/run.sh')).toBe('#!/bin/sh\necho hi\n');
    expect(await read('dist/lib/data.txt')).toBe('data');
    expect((await stat(path.join(root, 'dist/run.sh'))).mode & 0o111).toBe(0o111);
    expect((await stat(path.join(root, 'dist/lib/data.txt'))).mode & 0o111).toBe(0);
  });

  test('a directory restores over whatever is at its path, and equal trees store as one digest', async () => {
    await write('dist/a.txt', 'a');
    const record = await storeOut(blobs, root, root, 'dist');
    await write('dist/stale.txt', 'from a run that failed');
    await restoreOut(blobs, root, root, record);
    expect(await readdir(path.join(root, 'dist'))).toEqual(['a.txt']);
    expect((await storeOut(blobs, root, root, 'dist')).digest).toBe(record.digest);
    expect(await readdir(root)).toEqual(['dist']);
  });

  test('paths are relative to a pipeline in a subdirectory', async () => {
    await write('ml/models/net.bin', 'net');
    const pipelineDir = path.join(root, 'ml');
    const record = await storeOut(blobs, pipelineDir, root, 'models/net.bin');
    expect(record.path).toBe('models/net.bin');
    await removeOut(pipelineDir, root, 'models/net.bin');
    await restoreOut(blobs, pipelineDir, root, record);
    expect(await read('ml/models/net.bin')).toBe('net');
  });

  test('a missing out is MissingOutError naming it', async () => {
    const error = await storeOut(blobs, root, root, 'model.bin').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MissingOutError);
    expect((error as MissingOutError).path).toBe('model.bin');
    expect((error as Error).message).toContain('"model.bin" was not produced');
  });

  test('a directory out holding a symlink that leads outside is refused, not stored', async () => {
    await writeFile(path.join(outside, 'secret'), 'secret');
    await write('dist/a.txt', 'a');
    await symlink(path.join(outside, 'secret'), path.join(root, 'dist/peek'));
    await expect(storeOut(blobs, root, root, 'dist')).rejects.toBeInstanceOf(UnsafePathError);
  });

  test('restore refuses a symlinked directory pointing outside the workspace and touches nothing outside', async () => {
    await write('data/x', 'produced');
    const record = await storeOut(blobs, root, root, 'data/x');
    await rm(path.join(root, 'data'), { recursive: true });
    await symlink(outside, path.join(root, 'data'));
    const error = await restoreOut(blobs, root, root, record).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnsafePathError);
    expect((error as Error).message).toContain('goes through the symlink "data"');
    expect(await readdir(outside)).toEqual([]);
  });

  test('restore refuses "../x" and writes nothing next to the workspace', async () => {
    await write('x', 'produced');
    const record = await storeOut(blobs, root, root, 'x');
    await expect(restoreOut(blobs, root, root, { ...record, path: '../x' })).rejects.toBeInstanceOf(
      UnsafePathError,
    );
    expect(await readdir(base)).toEqual(['outside', 'store', 'workspace']);
  });

  test('a restore that meets a corrupt blob leaves the previous out whole and no temporary siblings', async () => {
    await write('dist/a.txt', 'a');
    await write('dist/b.txt', 'b');
    const record = await storeOut(blobs, root, root, 'dist');
    const manifest = DirManifest.parse(JSON.parse((await blobs.getBytes(record.digest)).toString()));
    const corrupt = manifest.files[1]?.digest.slice('sha256:'.length) ?? '';
    await writeFile(path.join(base, 'store/sha256', corrupt.slice(0, 2), corrupt), 'not b');
    await write('dist/a.txt', 'previous a');

    await expect(restoreOut(blobs, root, root, record)).rejects.toBeInstanceOf(BlobCorruptError);
    expect(await read('dist/a.txt')).toBe('previous a');
    expect(await readdir(root)).toEqual(['dist']);
  });
});

describe('removeOut', () => {
  test('removes a symlink itself, never what it points to', async () => {
    await writeFile(path.join(outside, 'keep'), 'keep');
    await symlink(outside, path.join(root, 'model'));
    await removeOut(root, root, 'model');
    await expect(lstat(path.join(root, 'model'))).rejects.toThrow('ENOENT');
    expect(await readFile(path.join(outside, 'keep'), 'utf8')).toBe('keep');
  });

  test('removes a directory with everything in it, and an absent out is fine', async () => {
    await write('dist/a/b.txt', 'b');
    await symlink(outside, path.join(root, 'dist/a/link'));
    await writeFile(path.join(outside, 'keep'), 'keep');
    await removeOut(root, root, 'dist');
    await removeOut(root, root, 'dist');
    expect(await readdir(root)).toEqual([]);
    expect(await readdir(outside)).toEqual(['keep']);
  });

  test('refuses to remove through a symlink that leads outside', async () => {
    await writeFile(path.join(outside, 'keep'), 'keep');
    await symlink(outside, path.join(root, 'data'));
    await expect(removeOut(root, root, 'data/keep')).rejects.toBeInstanceOf(UnsafePathError);
    expect(await readlink(path.join(root, 'data'))).toBe(outside);
    expect(await readdir(outside)).toEqual(['keep']);
  });
});

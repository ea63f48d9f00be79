import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { gitBlobId, gitBlobIdOfFile } from '../../runner/workspace/git-blob-id.js';

const run = promisify(execFile);
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-blob-id-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('gitBlobId', () => {
  test('is the id git gives the bytes, in either object format', () => {
    expect(gitBlobId(new Uint8Array(), 'sha1')).toBe('e69de29bb2d1d6434b8b29ae775ad8c2e48c5391');
    expect(gitBlobId(Buffer.from('hello\n'), 'sha1')).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    expect(gitBlobId(new Uint8Array(), 'sha256')).toBe(
      '473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813',
    );
  });

  test('a file too large to read whole is hashed as git hash-object does', async () => {
    const file = path.join(dir, 'big.bin');
    await writeFile(file, Buffer.alloc(9 * 1024 * 1024 + 7, 'ab'));
    const { stdout } = await run('git', ['hash-object', '--no-filters', file]);
    expect(await gitBlobIdOfFile(file, 'sha1')).toBe(stdout.trim());
  });

  test('a symlink is hashed by its target text, not what it points to', async () => {
    await writeFile(path.join(dir, 'target.py'), 'print(1)\n');
    await symlink('target.py', path.join(dir, 'link.py'));
    expect(await gitBlobIdOfFile(path.join(dir, 'link.py'), 'sha1')).toBe(
      gitBlobId(Buffer.from('target.py'), 'sha1'),
    );
  });
});

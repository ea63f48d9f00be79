import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { UnsafePathError } from '../../runner/workspace/unsafe-path-error.js';
import { resolveWorkspacePath } from '../../runner/workspace/workspace-path.js';

let base: string;
let root: string;
let outside: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-ws-')));
  root = path.join(base, 'workspace');
  outside = path.join(base, 'outside');
  await mkdir(path.join(root, 'data'), { recursive: true });
  await mkdir(outside);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function refusal(relPath: string): Promise<UnsafePathError> {
  const error = await resolveWorkspacePath(root, relPath).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(UnsafePathError);
  return error as UnsafePathError;
}

describe('resolveWorkspacePath', () => {
  test('a path inside the workspace resolves, whether or not it exists yet', async () => {
    expect(await resolveWorkspacePath(root, 'data/raw.csv')).toBe(path.join(root, 'data/raw.csv'));
    expect(await resolveWorkspacePath(root, 'new/deep/out.bin')).toBe(path.join(root, 'new/deep/out.bin'));
    expect(await resolveWorkspacePath(root, './data/')).toBe(path.join(root, 'data'));
    expect(await resolveWorkspacePath(root, 'data/../model.bin')).toBe(path.join(root, 'model.bin'));
  });

  test.each([
    ['/etc/passwd', '"/etc/passwd" is absolute; expected a path relative to the workspace'],
    ['../x', '"../x" leads outside the workspace; expected a path inside it'],
    ['data/../../x', '"data/../../x" leads outside the workspace; expected a path inside it'],
    ['.', '"." is the workspace itself; expected a path inside it'],
    ['', '"" is not a usable path; expected a relative path like "data/x"'],
  ])('refuses %j', async (relPath, message) => {
    const error = await refusal(relPath);
    expect(error.message).toBe(message);
    expect(error.path).toBe(relPath);
  });

  test('refuses a path through a symlinked directory that points outside, naming the link', async () => {
    await symlink(outside, path.join(root, 'linked'));
    const error = await refusal('linked/x');
    expect(error.message).toBe(
      `"linked/x" goes through the symlink "linked", which points outside the workspace (${outside})`,
    );
  });

  test('refuses a final symlink that points outside, unless removing the link itself', async () => {
    await writeFile(path.join(outside, 'secret'), 'secret');
    await symlink(path.join(outside, 'secret'), path.join(root, 'data/model.bin'));
    const error = await refusal('data/model.bin');
    expect(error.message).toContain('is a symlink that points outside the workspace');
    expect(await resolveWorkspacePath(root, 'data/model.bin', { allowFinalSymlink: true })).toBe(
      path.join(root, 'data/model.bin'),
    );
  });

  test('refuses a dangling symlink whose target would be created outside', async () => {
    await symlink('../../outside/not-yet', path.join(root, 'data/later'));
    expect((await refusal('data/later/x')).message).toContain(path.join(outside, 'not-yet'));
  });

  test('accepts symlinks that stay inside the workspace', async () => {
    await symlink('data', path.join(root, 'current'));
    await symlink('../missing-inside', path.join(root, 'data/dangling'));
    expect(await resolveWorkspacePath(root, 'current/raw.csv')).toBe(path.join(root, 'current/raw.csv'));
    expect(await resolveWorkspacePath(root, 'data/dangling')).toBe(path.join(root, 'data/dangling'));
  });

  test('refuses a symlink chain that ends outside', async () => {
    await symlink(outside, path.join(root, 'far'));
    await symlink('far', path.join(root, 'near'));
    expect((await refusal('near/file')).message).toContain('"near"');
  });
});

import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { ignoreStateDir } from '../../runner/ignore-state-dir.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-ignore-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a state folder is created ignoring itself, and a .gitignore saying otherwise is put right', async () => {
  const stateDir = path.join(dir, 'sub', '.fluksio');
  await ignoreStateDir(stateDir);
  const ignore = path.join(stateDir, '.gitignore');
  const written = await readFile(ignore, 'utf8');
  expect(written.split('\n')).toContain('*');
  await writeFile(ignore, '!model.json\n');
  await ignoreStateDir(stateDir);
  expect(await readFile(ignore, 'utf8')).toBe(written);
});

test('a .gitignore that already says so is left as it is', async () => {
  await ignoreStateDir(dir);
  const ignore = path.join(dir, '.gitignore');
  // Dated long ago: a write now, however soon, would date it today.
  const longAgo = new Date('2000-01-01T00:00:00Z');
  await utimes(ignore, longAgo, longAgo);
  await ignoreStateDir(dir);
  expect((await stat(ignore)).mtime).toEqual(longAgo);
});

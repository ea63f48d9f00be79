import { existsSync } from 'node:fs';
import { chmod, mkdir, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { readCodeIndex, type CodeIndex } from '../../runner/keys/code-index.js';
import { codeDigest } from '../../runner/keys/code-digest.js';
import { RACY_WINDOW_MS } from '../../runner/keys/stat-cache.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

const repos: TestRepo[] = [];
afterEach(async () => {
  await Promise.all(repos.splice(0).map((made) => made.cleanup()));
});

const wholeRepository = { pipelineDir: '', include: null, exclude: [] };
const digestOf = (index: CodeIndex) => codeDigest(index, wholeRepository).digest;

/** A repository whose next read reuses git's last listing: everything in it has settled. */
async function settledRepo(files: Record<string, string>, prepare?: (made: TestRepo) => Promise<void>) {
  const made = await makeRepo({ files });
  repos.push(made);
  await prepare?.(made);
  await vi.waitFor(
    async () => {
      await readCodeIndex(made.dir);
      expect(existsSync(path.join(made.dir, '.fluksio', 'code-stat-cache-listing'))).toBe(true);
    },
    { timeout: 5 * RACY_WINDOW_MS, interval: 200 },
  );
  const warm = await readCodeIndex(made.dir);
  expect(warm.gitListed).toBe(false);
  expect(warm.filesRead).toBe(0);
  return { made, before: digestOf(warm) };
}

/**
 * The read after an edit: what a read with no stat cache and no snapshot says, and (but
 * for an edit of git's state alone, `before` null) not what it said before.
 */
async function expectSeen(made: TestRepo, before: string | null): Promise<CodeIndex> {
  const after = await readCodeIndex(made.dir);
  const truth = await readCodeIndex(made.dir, { statCacheFile: null });
  expect(digestOf(after)).toBe(digestOf(truth));
  expect(after.changed).toEqual(truth.changed);
  expect(after.commit).toBe(truth.commit);
  if (before !== null) expect(digestOf(after)).not.toBe(before);
  return after;
}

const files = {
  '.gitignore': 'data/*.csv\n',
  'a.py': 'A = 1\n',
  'b.py': 'B = 2\n',
  'pkg/c.py': 'C = 3\n',
  'data/raw.csv': '',
};

describe('a warm read that starts no git still sees every edit a user can make', () => {
  test('a same-size edit with its mtime put back', async () => {
    const { made, before } = await settledRepo(files);
    const file = path.join(made.dir, 'pkg/c.py');
    const { atime, mtime } = await stat(file);
    await writeFile(file, 'C = 4\n');
    await utimes(file, atime, mtime);
    const after = await expectSeen(made, before);
    expect(after.gitListed).toBe(false);
    expect(after.changed).toEqual(new Set(['pkg/c.py']));
  });

  test('chmod +x', async () => {
    const { made, before } = await settledRepo(files);
    await chmod(path.join(made.dir, 'a.py'), 0o755);
    expect((await expectSeen(made, before)).files.get('a.py')).toMatch(/^100755 /);
  });

  test('a new empty file, at the top, in a subdirectory, and beside ignored files only', async () => {
    for (const newFile of ['new.py', 'pkg/new.py', 'data/new.py']) {
      const { made, before } = await settledRepo(files);
      await writeFile(path.join(made.dir, newFile), '');
      const after = await expectSeen(made, before);
      expect(after.gitListed).toBe(true);
      expect(after.changed).toContain(newFile);
    }
  });

  test('a new directory holding a file', async () => {
    const { made, before } = await settledRepo(files);
    await mkdir(path.join(made.dir, 'pkg/sub'));
    await writeFile(path.join(made.dir, 'pkg/sub/d.py'), 'D = 4\n');
    expect((await expectSeen(made, before)).changed).toContain('pkg/sub/d.py');
  });

  test('a symlink retargeted to a name of the same length', async () => {
    const { made, before } = await settledRepo(files, async (repo) => {
      await symlink('a.py', path.join(repo.dir, 'link.py'));
      await repo.commitAll('link');
    });
    await unlink(path.join(made.dir, 'link.py'));
    await symlink('b.py', path.join(made.dir, 'link.py'));
    expect((await expectSeen(made, before)).changed).toEqual(new Set(['link.py']));
  });

  test('a .gitignore edit that stops ignoring a file', async () => {
    const { made, before } = await settledRepo(files);
    const ignore = path.join(made.dir, '.gitignore');
    const { atime, mtime } = await stat(ignore);
    await writeFile(ignore, 'data/*.csx\n');
    await utimes(ignore, atime, mtime);
    expect((await expectSeen(made, before)).changed).toContain('data/raw.csv');
  });

  test('an ignore rule in .git/info/exclude that hides an untracked file', async () => {
    const { made, before } = await settledRepo(files, async (repo) => {
      await repo.write('notes.py', 'N = 1\n');
    });
    await writeFile(path.join(made.dir, '.git/info/exclude'), 'notes.py\n');
    const after = await expectSeen(made, before);
    expect(after.files.has('notes.py')).toBe(false);
  });

  test('a config include that did not exist yet, created with an excludesFile, is seen', async () => {
    const outside = await makeRepo({ files: {} });
    repos.push(outside);
    const made = await makeRepo({ files });
    repos.push(made);
    await made.write('notes.py', 'N = 1\n');
    await made.git('config', 'include.path', 'extra.cfg');
    // With an include, no snapshot is trusted: every read asks git.
    expect((await readCodeIndex(made.dir)).gitListed).toBe(true);
    const before = digestOf(await readCodeIndex(made.dir));
    expect((await readCodeIndex(made.dir)).gitListed).toBe(true);
    const ignore = path.join(outside.dir, 'ignore');
    await writeFile(ignore, 'notes.py\n');
    await writeFile(path.join(made.dir, '.git/extra.cfg'), `[core]\n\texcludesFile = ${ignore}\n`);
    const after = await expectSeen(made, before);
    expect(after.files.has('notes.py')).toBe(false);
  });

  test('a global config kept elsewhere behind a symlink: an edit of its target is seen', async () => {
    const home = await makeRepo({ files: { 'dotfiles/gitconfig': '[user]\n\tname = someone\n' } });
    repos.push(home);
    const ignore = path.join(home.dir, 'ignore');
    await writeFile(ignore, 'notes.py\n');
    await symlink(path.join(home.dir, 'dotfiles/gitconfig'), path.join(home.dir, '.gitconfig'));
    const previousHome = process.env.HOME;
    process.env.HOME = home.dir;
    try {
      const { made, before } = await settledRepo(files, async (repo) => {
        await repo.write('notes.py', 'N = 1\n');
      });
      await writeFile(
        path.join(home.dir, 'dotfiles/gitconfig'),
        `[user]\n\tname = someone\n[core]\n\texcludesFile = ${ignore}\n`,
      );
      const after = await expectSeen(made, before);
      expect(after.files.has('notes.py')).toBe(false);
    } finally {
      process.env.HOME = previousHome;
    }
  });

  test('git add, commit and a branch switch: the index, the ref and HEAD', async () => {
    const { made } = await settledRepo(files, async (repo) => {
      await repo.write('notes.py', 'N = 1\n');
    });
    await made.git('add', 'notes.py');
    // The same bytes at the same paths: only git's answer (what the index holds) changed.
    const added = await expectSeen(made, null);
    expect(added.gitListed).toBe(true);
    expect(added.changed).toEqual(new Set(['notes.py']));
    await made.git('commit', '--quiet', '--message', 'notes');
    const committed = await readCodeIndex(made.dir);
    expect(committed.commit).toBe((await made.git('rev-parse', 'HEAD')).trim());
    expect(committed.changed.size).toBe(0);
    await made.git('checkout', '--quiet', 'HEAD~1');
    const switched = await expectSeen(made, digestOf(committed));
    expect(switched.commit).toBe((await made.git('rev-parse', 'HEAD')).trim());
  });

  test('a submodule keeps git asked every time, so its dirt is seen', async () => {
    const lib = await makeRepo({ files: { 'lib.py': 'v1\n' } });
    repos.push(lib);
    const made = await makeRepo({ files });
    repos.push(made);
    await made.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '--quiet', lib.dir, 'vendor');
    await made.commitAll('vendor');
    const clean = await readCodeIndex(made.dir);
    expect(clean.gitListed).toBe(true);
    await writeFile(path.join(made.dir, 'vendor/lib.py'), 'v2\n');
    const dirty = await expectSeen(made, digestOf(clean));
    expect(dirty.gitListed).toBe(true);
    expect(dirty.changed).toEqual(new Set(['vendor']));
    expect(existsSync(path.join(made.dir, '.fluksio', 'code-stat-cache-listing'))).toBe(false);
  });
});

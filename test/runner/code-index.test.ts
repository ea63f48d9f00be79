import { existsSync } from 'node:fs';
import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rename,
  rm,
  symlink,
  unlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { readCodeIndex } from '../../runner/keys/code-index.js';
import { fileStamp } from '../../runner/keys/file-stamp.js';
import { NotAGitRepositoryError } from '../../runner/workspace/not-a-git-repository-error.js';
import { RACY_WINDOW_MS } from '../../runner/keys/stat-cache.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

const repos: TestRepo[] = [];
async function repo(...args: Parameters<typeof makeRepo>): Promise<TestRepo> {
  const made = await makeRepo(...args);
  repos.push(made);
  return made;
}
afterEach(async () => {
  await Promise.all(repos.splice(0).map((made) => made.cleanup()));
});

/** What git itself records for every path once the whole work tree is staged, as `<mode> <id>`. */
async function stagedIds(made: TestRepo): Promise<Map<string, string>> {
  await made.git('add', '--all');
  const ids = new Map<string, string>();
  for (const line of (await made.git('ls-files', '--stage', '-z')).split('\0')) {
    const match = /^(\d+) (\w+) \d+\t(.+)$/.exec(line);
    if (match?.[1] && match[2] && match[3]) ids.set(match[3], `${match[1]} ${match[2]}`);
  }
  return ids;
}

/** `git hash-object` of a work-tree file, as a regular file's code index entry. */
async function hashed(made: TestRepo, file: string): Promise<string> {
  return `100644 ${(await made.git('hash-object', file)).trim()}`;
}

describe('readCodeIndex', () => {
  test('blob ids match git hash-object for tracked, modified, untracked files and a symlink', async () => {
    const made = await repo({ files: { 'train.py': 'print(1)\n', 'lib/helpers.py': 'x = 1\n' } });
    await symlink('train.py', path.join(made.dir, 'entry.py'));
    await made.commitAll('add a symlink');
    await made.write('train.py', 'print(2)\n');
    await made.write('features.py', 'y = 2\n');
    await symlink('lib', path.join(made.dir, 'lib-link'));

    const index = await readCodeIndex(made.dir);

    for (const file of ['train.py', 'lib/helpers.py', 'features.py']) {
      expect(index.files.get(file), file).toBe(await hashed(made, file));
    }
    expect(index.files).toEqual(await stagedIds(made));
    expect(index.changed).toEqual(new Set(['train.py', 'features.py', 'lib-link']));
    expect(index.commit).toBe((await made.git('rev-parse', 'HEAD')).trim());
    expect(index.objectFormat).toBe('sha1');
    expect(index.repoRoot).toBe(made.dir);
  });

  test('a deleted file leaves the index and counts as changed', async () => {
    const made = await repo({ files: { 'a.py': 'a\n', 'b.py': 'b\n' } });
    await unlink(path.join(made.dir, 'b.py'));
    const index = await readCodeIndex(made.dir);
    expect([...index.files.keys()]).toEqual(['a.py']);
    expect(index.changed).toEqual(new Set(['b.py']));
  });

  test('a staged edit undone in the work tree is not a change', async () => {
    const made = await repo({ files: { 'a.py': 'a\n' } });
    await made.write('a.py', 'edited\n');
    await made.git('add', 'a.py');
    await made.write('a.py', 'a\n');
    const index = await readCodeIndex(made.dir);
    expect(index.changed.size).toBe(0);
    expect(index.files.get('a.py')).toBe(`100644 ${(await made.git('rev-parse', 'HEAD:a.py')).trim()}`);
  });

  test('bytecode and .fluksio never count, committed or not', async () => {
    const made = await repo({
      files: {
        'a.py': 'a\n',
        '__pycache__/a.cpython-312.pyc': 'x',
        'pkg/old.pyc': 'x',
        '.fluksio/state': 's',
      },
    });
    await made.write('pkg/__pycache__/b.cpython-312.pyc', 'y');
    await made.write('.fluksio/blobs/ab', 'z');
    await made.write('sub/.fluksio/db', 'z');
    await made.write('__pycache__/a.cpython-312.pyc', 'changed');
    const index = await readCodeIndex(made.dir);
    expect([...index.files.keys()]).toEqual(['a.py']);
    expect(index.changed.size).toBe(0);
  });

  test('a repository without commits has a null commit and its files as untracked', async () => {
    const made = await repo({ files: { 'a.py': 'a\n' }, commit: false });
    const index = await readCodeIndex(made.dir);
    expect(index.commit).toBeNull();
    expect(index.files).toEqual(new Map([['a.py', await hashed(made, 'a.py')]]));
    expect(index.changed).toEqual(new Set(['a.py']));
  });

  test('a submodule stays in the index as its commit id', async () => {
    const made = await repo({ files: { 'a.py': 'a\n' } });
    const head = (await made.git('rev-parse', 'HEAD')).trim();
    await made.git('update-index', '--add', '--cacheinfo', `160000,${head},vendor/lib`);
    await made.git('commit', '--quiet', '--message', 'add a gitlink');
    // What a clone without `submodule update` has: an empty directory at the gitlink.
    await mkdir(path.join(made.dir, 'vendor/lib'), { recursive: true });
    const index = await readCodeIndex(made.dir);
    expect(index.files.get('vendor/lib')).toBe(`160000 ${head}`);
    expect(index.changed.size).toBe(0);
  });

  test('an untracked nested repository counts as the commit it has checked out', async () => {
    const made = await repo({ files: { 'a.py': 'a\n' } });
    const nested = await repo({ files: { 'n.py': 'n\n' } });
    await made.git('clone', '--quiet', nested.dir, 'nested');
    const index = await readCodeIndex(made.dir);
    expect(index.files.get('nested')).toBe(`160000 ${(await nested.git('rev-parse', 'HEAD')).trim()}`);
    expect(index.files.has('nested/n.py')).toBe(false);
    expect(index.changed).toEqual(new Set(['nested']));
  });

  test('a sha256 repository gets sha256 blob ids', async () => {
    const made = await repo({ files: { 'a.py': 'a\n' }, objectFormat: 'sha256' });
    await made.write('a.py', 'b\n');
    await made.write('c.py', 'c\n');
    const index = await readCodeIndex(made.dir);
    expect(index.objectFormat).toBe('sha256');
    expect(index.commit).toMatch(/^[0-9a-f]{64}$/);
    expect(index.files).toEqual(await stagedIds(made));
  });

  test('a subdirectory reads the whole repository, relative to its root', async () => {
    const made = await repo({ files: { 'ml/train.py': 't\n', 'shared/util.py': 'u\n' } });
    const index = await readCodeIndex(path.join(made.dir, 'ml'));
    expect(index.repoRoot).toBe(made.dir);
    expect([...index.files.keys()].sort()).toEqual(['ml/train.py', 'shared/util.py']);
  });

  test('modes count as git counts them: the exec bit and a symlink are in the id and in changed', async () => {
    const made = await repo({ files: { 'gen.sh': 'echo hi\n', 'a.py': 'a\n' } });
    await chmod(path.join(made.dir, 'gen.sh'), 0o755);
    await rm(path.join(made.dir, 'a.py'));
    await symlink('gen.sh', path.join(made.dir, 'a.py'));
    const index = await readCodeIndex(made.dir);
    expect(index.files).toEqual(await stagedIds(made));
    expect(index.files.get('gen.sh')).toMatch(/^100755 /);
    expect(index.files.get('a.py')).toMatch(/^120000 /);
    expect(index.changed).toEqual(new Set(['gen.sh', 'a.py']));
  });

  test('ids are the working-tree bytes, whatever clean filter git applies; changed is what a checkout would not write', async () => {
    const made = await repo({ files: { '.gitattributes': '*.txt filter=upper\n', 'a.txt': 'lower\n' } });
    await made.git('config', 'filter.upper.clean', 'tr a-z A-Z');
    // Cleaned again whatever the index's stat says: git re-cleans a.txt on its own only
    // while its entry is racily clean, which a busy machine's clock can leave it not.
    await made.git('add', '--renormalize', '.');
    await made.commitAll('filtered');
    // git calls 'lower' unchanged (it cleans to the committed LOWER), but a checkout
    // of the commit writes LOWER: a stage reads other bytes than the commit's.
    expect(await made.git('status', '--porcelain')).toBe('');
    const index = await readCodeIndex(made.dir);
    expect(index.files.get('a.txt')).toBe(
      `100644 ${(await made.git('hash-object', '--no-filters', 'a.txt')).trim()}`,
    );
    expect(index.changed).toEqual(new Set(['a.txt']));
    await made.write('a.txt', 'LOWER\n');
    const checkedOut = await readCodeIndex(made.dir);
    expect(checkedOut.files.get('a.txt')).not.toBe(index.files.get('a.txt'));
    expect(checkedOut.changed.size).toBe(0);
    await made.write('a.txt', 'other\n');
    expect((await readCodeIndex(made.dir)).changed).toEqual(new Set(['a.txt']));
  });

  test('line-ending conversion a checkout gives back is no change', async () => {
    const made = await repo({ files: { 'a.txt': 'one\ntwo\n' } });
    await made.git('config', 'core.autocrlf', 'true');
    await rm(path.join(made.dir, 'a.txt'));
    await made.git('checkout', '--', 'a.txt');
    expect(await readFile(path.join(made.dir, 'a.txt'), 'utf8')).toBe('one\r\ntwo\r\n');
    expect((await readCodeIndex(made.dir)).changed.size).toBe(0);
    await made.write('a.txt', 'one\r\nthree\r\n');
    expect((await readCodeIndex(made.dir)).changed).toEqual(new Set(['a.txt']));
  });

  test('distrusting the repository’s config, git runs none of its programs, nor a nested repository’s, and line endings still convert', async () => {
    const made = await repo({
      files: { 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n', '.gitattributes': 'a.txt text eol=crlf\n' },
    });
    await rm(path.join(made.dir, 'a.txt'));
    await made.git('checkout', '--', 'a.txt');
    const markers = await mkdtemp(path.join(tmpdir(), 'fluksio-markers-'));
    try {
      const ran = (name: string) => `touch ${markers}/${name}; false`;
      await made.git('config', 'core.fsmonitor', ran('fsmonitor'));
      await made.git('config', 'filter.evil.clean', `touch ${markers}/clean; cat`);
      await made.git('config', 'filter.evil.smudge', `touch ${markers}/smudge; cat`);
      await mkdir(path.join(made.dir, '.git/info'), { recursive: true });
      await writeFile(path.join(made.dir, '.git/info/attributes'), '*.txt filter=evil\n');
      await made.write('b.txt', 'b\n\n');
      await made.write('nested/.git/HEAD', 'ref: refs/heads/main\n');
      await mkdir(path.join(made.dir, 'nested/.git/objects'));
      await mkdir(path.join(made.dir, 'nested/.git/refs'));
      await made.write('nested/.git/config', `[core]\n\tbare = false\n\tfsmonitor = "${ran('nested')}"\n`);
      await made.write('nested/n.txt', 'n\n');

      const index = await readCodeIndex(made.dir, { statCacheFile: null, distrustRepositoryConfig: true });
      expect(await readdir(markers)).toEqual([]);
      expect(index.changed).toEqual(new Set(['b.txt', 'nested']));
      // Trusting it, git runs them: what the distrust is for.
      await readCodeIndex(made.dir, { statCacheFile: null });
      expect((await readdir(markers)).sort()).toEqual(['clean', 'fsmonitor', 'nested', 'smudge']);
    } finally {
      await rm(markers, { recursive: true, force: true });
    }
  });

  test('a submodule with an uncommitted edit or an untracked file gets a digest of its files and counts as changed', async () => {
    const lib = await repo({ files: { 'lib.py': 'v1\n' } });
    const made = await repo({ files: { 'a.py': 'a\n' } });
    await made.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '--quiet', lib.dir, 'vendor');
    await made.commitAll('add vendor');
    const commit = (await lib.git('rev-parse', 'HEAD')).trim();
    const clean = await readCodeIndex(made.dir);
    expect(clean.files.get('vendor')).toBe(`160000 ${commit}`);
    expect(clean.changed.size).toBe(0);

    await writeFile(path.join(made.dir, 'vendor/lib.py'), 'v2\n');
    const edited = await readCodeIndex(made.dir);
    expect(edited.files.get('vendor')).toMatch(new RegExp(`^160000 ${commit}\\+[0-9a-f]{64}$`));
    expect(edited.changed).toEqual(new Set(['vendor']));

    await writeFile(path.join(made.dir, 'vendor/lib.py'), 'v1\n');
    await writeFile(path.join(made.dir, 'vendor/new.py'), 'new\n');
    const untracked = await readCodeIndex(made.dir);
    expect(untracked.files.get('vendor')).not.toBe(edited.files.get('vendor'));
    expect(untracked.changed).toEqual(new Set(['vendor']));

    await rm(path.join(made.dir, 'vendor/new.py'));
    expect((await readCodeIndex(made.dir)).files.get('vendor')).toBe(`160000 ${commit}`);
  });

  test("each file's stamp is its inode, size and mtime, whether the stat cache vouched for it or it was read", async () => {
    const made = await repo({ files: { 'a.py': 'a\n', 'b.py': 'b\n' } });
    const cacheFile = path.join(made.dir, '.fluksio/stat-cache');
    const stampNow = async (file: string) => {
      const stats = await lstat(path.join(made.dir, file));
      return fileStamp(stats.ino, stats.size, stats.mtimeMs);
    };
    // Once the files are older than the racy window, the stat cache answers for both.
    await vi.waitFor(
      async () => expect((await readCodeIndex(made.dir, { statCacheFile: cacheFile })).filesRead).toBe(0),
      { timeout: 5 * RACY_WINDOW_MS, interval: 200 },
    );
    const warm = await readCodeIndex(made.dir, { statCacheFile: cacheFile });
    expect(warm.filesRead).toBe(0);
    expect(new Map(warm.stamps.entries())).toEqual(
      new Map([
        ['a.py', await stampNow('a.py')],
        ['b.py', await stampNow('b.py')],
      ]),
    );

    // The same bytes renamed over it, as `sed -i` writes: the id stays, the stamp does not.
    await made.write('a.tmp', 'a\n');
    await rename(path.join(made.dir, 'a.tmp'), path.join(made.dir, 'a.py'));
    const rewritten = await readCodeIndex(made.dir, { statCacheFile: cacheFile });
    expect(rewritten.filesRead).toBe(1);
    expect(rewritten.files).toEqual(warm.files);
    expect(rewritten.stamps.get('a.py')).toBe(await stampNow('a.py'));
    expect(rewritten.stamps.get('a.py')).not.toBe(warm.stamps.get('a.py'));
    expect(rewritten.stamps.get('b.py')).toBe(warm.stamps.get('b.py'));
  });

  test("a submodule's stamp changes when a file in it is rewritten to the same bytes", async () => {
    const lib = await repo({ files: { 'lib.py': 'v1\n' } });
    const made = await repo({ files: { 'a.py': 'a\n' } });
    await made.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '--quiet', lib.dir, 'vendor');
    await made.commitAll('add vendor');
    const before = await readCodeIndex(made.dir);
    await writeFile(path.join(made.dir, 'vendor/lib.tmp'), 'v1\n');
    await rename(path.join(made.dir, 'vendor/lib.tmp'), path.join(made.dir, 'vendor/lib.py'));
    const after = await readCodeIndex(made.dir);
    expect(after.files.get('vendor')).toBe(before.files.get('vendor'));
    expect(after.stamps.get('vendor')).toMatch(/^[0-9a-f]{64}$/);
    expect(after.stamps.get('vendor')).not.toBe(before.stamps.get('vendor'));
  });

  test('symlinks leading outside the repository are recorded with the sentence refusing them', async () => {
    const outside = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-outside-')));
    try {
      const made = await repo({ files: { 'a.py': 'a\n' } });
      await symlink(path.join(outside, 'x.py'), path.join(made.dir, 'out.py'));
      await symlink('a.py', path.join(made.dir, 'in.py'));
      const index = await readCodeIndex(made.dir);
      expect([...index.refused.keys()]).toEqual(['out.py']);
      expect(index.refused.get('out.py')).toContain(
        `"out.py" is a symlink that points outside the workspace (${outside}/x.py)`,
      );
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  test('files named in bytes that are not UTF-8 are refused, named as git quotes them, also when the listing is reused', async () => {
    const made = await repo({ files: { '.gitignore': 'ignored*\n', 'a.py': 'a\n' } });
    const named = (prefix: string) =>
      Buffer.concat([Buffer.from(`${made.dir}/${prefix}`), Buffer.from([0xe9, 0x2e])]);
    await writeFile(named('tracked'), 'tracked\n');
    await made.commitAll('a Latin-1 name');
    await writeFile(named('untracked'), 'untracked\n');
    await writeFile(named('ignored'), 'ignored\n');
    const expectRefused = (index: Awaited<ReturnType<typeof readCodeIndex>>) => {
      expect([...index.refused.keys()].sort()).toEqual(['tracked\uFFFD.', 'untracked\uFFFD.']);
      expect(index.refused.get('tracked\uFFFD.')).toContain(
        'Code file "tracked\\351." is named in bytes that are not UTF-8',
      );
      expect([...index.files.keys()].sort()).toEqual(['.gitignore', 'a.py']);
    };
    expectRefused(await readCodeIndex(made.dir));
    // git's answer is kept once everything settled, and read back instead of asking again.
    await vi.waitFor(
      async () => {
        await readCodeIndex(made.dir);
        expect(existsSync(path.join(made.dir, '.fluksio', 'code-stat-cache-listing'))).toBe(true);
      },
      { timeout: 5 * RACY_WINDOW_MS, interval: 200 },
    );
    const warm = await readCodeIndex(made.dir);
    expect(warm.gitListed).toBe(false);
    expectRefused(warm);
  });

  test('a damaged stat cache is not trusted: ids stay those of the bytes', async () => {
    const made = await repo({ files: { 'a.py': 'a\n' } });
    const cacheFile = path.join(made.dir, 'stat-cache');
    const truth = (await readCodeIndex(made.dir, { statCacheFile: null })).files.get('a.py') ?? '';
    // Only a file older than the racy window is saved at all.
    await vi.waitFor(
      async () => {
        await readCodeIndex(made.dir, { statCacheFile: cacheFile });
        expect(await readFile(cacheFile, 'utf8')).toContain(truth.slice(7));
      },
      { timeout: 5 * RACY_WINDOW_MS, interval: 200 },
    );
    const saved = await readFile(cacheFile, 'latin1');
    await writeFile(cacheFile, saved.replace(truth.slice(7), '0'.repeat(40)), 'latin1');
    expect((await readCodeIndex(made.dir, { statCacheFile: cacheFile })).files.get('a.py')).toBe(truth);
  });

  test('a directory that does not exist is named in the error', async () => {
    const missing = path.join(tmpdir(), 'fluksio-no-such-dir');
    await expect(readCodeIndex(missing)).rejects.toThrow(`${missing} does not exist`);
  });

  test('a directory outside any git repository is refused with a hint', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'fluksio-plain-'));
    try {
      const error = await readCodeIndex(dir).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(NotAGitRepositoryError);
      expect((error as Error).message).toBe(
        `${dir} is not inside a git repository: fluksio stamps runs with a commit ` +
          `(run "git init" and commit your pipeline)`,
      );
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});

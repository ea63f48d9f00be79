import { lstatSync, type Stats } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { loadStatCache, RACY_WINDOW_MS, StatCache } from '../../runner/stat-cache.js';

let dir: string;
let cacheFile: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-stat-cache-'));
  cacheFile = path.join(dir, '.fluksio', 'code-stat-cache');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ID = '100644 ce013625030ba8dba906f756967f9e9ca394464a';
/** A scan that starts long after the test's files were written: none is in the racy window. */
const later = () => Date.now() + 10 * RACY_WINDOW_MS;

async function fileStats(name: string, content = 'hello\n'): Promise<Stats> {
  await writeFile(path.join(dir, name), content);
  return lstatSync(path.join(dir, name));
}

/** Saves one scan that hashed `entries`, as readCodeIndex does. */
async function saveScan(entries: [string, Stats, string][], scanStartedMs = later()): Promise<void> {
  const cache = new StatCache(cacheFile, 'sha1', loadStatCache(cacheFile), scanStartedMs);
  for (const [name, stats, id] of entries) cache.remember(name, stats, id);
  await cache.save();
}

async function reopened(): Promise<StatCache> {
  return new StatCache(cacheFile, 'sha1', loadStatCache(cacheFile), later());
}

describe('StatCache', () => {
  test('an id is trusted while inode, size, mtime and ctime are those it was read under', async () => {
    const stats = await fileStats('a.py');
    await saveScan([['a.py', stats, ID]]);
    const cache = await reopened();
    expect(cache.lookup('a.py', stats)).toBe(ID);
    expect(cache.lookup('a.py', { ...stats } as Stats)).toBe(ID);
    for (const field of ['ino', 'size', 'mtimeMs', 'ctimeMs'] as const) {
      const changed = { ...stats, [field]: stats[field] + 1 } as Stats;
      expect(cache.lookup('a.py', changed), field).toBeNull();
    }
    expect(cache.lookup('b.py', stats)).toBeNull();
  });

  test('a file written or changed within the racy window of the read is not saved', async () => {
    const stats = await fileStats('a.py');
    await saveScan([['a.py', stats, ID]], Date.now());
    expect(loadStatCache(cacheFile)).toBeNull();
    await saveScan([['a.py', stats, ID]], Math.max(stats.mtimeMs, stats.ctimeMs) + RACY_WINDOW_MS + 1);
    expect((await reopened()).lookup('a.py', stats)).toBe(ID);
  });

  test('a damaged, truncated or foreign file is not trusted', async () => {
    const stats = await fileStats('a.py');
    await saveScan([['a.py', stats, ID]]);
    // latin1 keeps every byte as one character, so only the named change is made.
    const saved = await readFile(cacheFile, 'latin1');
    await writeFile(cacheFile, saved, 'latin1');
    expect(loadStatCache(cacheFile)).not.toBeNull();
    const damaged = [
      saved.replace(ID, ID.replace('c', 'd')),
      saved.slice(0, -10),
      'not a cache\n',
      '',
      saved.replace('fluksio-stat-cache 3', 'fluksio-stat-cache 9'),
    ];
    for (const text of damaged) {
      await writeFile(cacheFile, text, 'latin1');
      expect(loadStatCache(cacheFile), text.slice(0, 80)).toBeNull();
    }
  });

  test('ids of another object format are not used', async () => {
    const stats = await fileStats('a.py');
    await saveScan([['a.py', stats, ID]]);
    const sha256 = new StatCache(cacheFile, 'sha256', loadStatCache(cacheFile), later());
    expect(sha256.lookup('a.py', stats)).toBeNull();
  });

  test('a save keeps what this scan looked up or hashed, and drops files it no longer saw', async () => {
    const a = await fileStats('a.py');
    const b = await fileStats('b.py', 'other\n');
    await saveScan([
      ['a.py', a, ID],
      ['b.py', b, ID],
    ]);
    const scan = await reopened();
    expect(scan.lookup('a.py', a)).toBe(ID);
    await scan.save();
    const next = await reopened();
    expect(next.lookup('a.py', a)).toBe(ID);
    expect(next.lookup('b.py', b)).toBeNull();
  });

  test('a scan that learnt nothing rewrites the file only once stale entries pass a quarter of the rest', async () => {
    const names = ['a.py', 'b.py', 'c.py', 'd.py', 'e.py'];
    const stats = await Promise.all(names.map((name) => fileStats(name, `${name}\n`)));
    await saveScan(names.map((name, i) => [name, stats[i] as Stats, ID]));
    const saved = await readFile(cacheFile);
    // e.py changed since: one stale entry of five is kept, and the file is not written again.
    const oneStale = await reopened();
    names.slice(0, 4).forEach((name, i) => expect(oneStale.lookup(name, stats[i] as Stats)).toBe(ID));
    await oneStale.save();
    expect(await readFile(cacheFile)).toEqual(saved);
    // d.py changed too: two stale entries against three fresh ones, and both are dropped.
    const twoStale = await reopened();
    names.slice(0, 3).forEach((name, i) => expect(twoStale.lookup(name, stats[i] as Stats)).toBe(ID));
    await twoStale.save();
    expect((await reopened()).knownPaths).toEqual(['a.py', 'b.py', 'c.py']);
  });

  test('entries are found whatever order a scan asks in, and each only under its own stat', async () => {
    const names = ['a.py', 'b.py', 'c.py', 'd.py'];
    const stats = await Promise.all(names.map((name) => fileStats(name, `${name}\n`)));
    const values = names.map((name, i) => `100644 ${String(i).repeat(40)}`);
    const cache = new StatCache(cacheFile, 'sha1', loadStatCache(cacheFile), later());
    names.forEach((name, i) => cache.remember(name, stats[i] as Stats, values[i] as string));
    await cache.save(['c.py', 'a.py']);
    const scan = await reopened();
    expect(scan.knownPaths).toEqual(['c.py', 'a.py', 'b.py', 'd.py']);
    for (const i of [3, 0, 0, 2, 1]) {
      expect(scan.lookup(names[i] as string, stats[i] as Stats), names[i]).toBe(values[i]);
      expect(scan.hit(names[i] as string), names[i]).toBe(values[i]);
    }
    expect(scan.lookup('a.py', stats[1] as Stats)).toBeNull();
    expect(scan.lookupEntry(0, stats[2] as Stats)).toBe(values[2]);
  });

  test('a cache that cannot be written is only a slower next read', async () => {
    const stats = await fileStats('a.py');
    await writeFile(path.join(dir, '.fluksio'), 'a file where the directory should be');
    await expect(saveScan([['a.py', stats, ID]])).resolves.toBeUndefined();
  });
});

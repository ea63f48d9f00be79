import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lock as lockfileLock } from 'proper-lockfile';
import { afterEach, expect, test, vi } from 'vitest';
import { openLocalState } from '../../local/local-state.js';
import { lockDirectory } from '../../store/db/lock-directory.js';
import { spawnFluksio, type FluksioProcess } from '../helpers/fluksio-process.js';
import { makeRepo, type TestRepo } from '../helpers/make-repo.js';

/**
 * Every wait given here is far below the 30 s after which proper-lockfile's `<dir>.lock`
 * goes stale: a store taken within one was taken because its holder's lock was gone, not
 * because it aged.
 */
const SHORT_WAIT_MS = 2_000;

/** A pipeline whose one stage says it started, then waits for `release` before it ends. */
const WAITING_PIPELINE = {
  '.gitignore': 'started\nrelease\ndone.txt\n',
  'fluksio.yml': [
    'version: 1',
    'stages:',
    '  wait:',
    '    cmd: touch started && while [ ! -e release ]; do sleep 0.05; done && touch done.txt',
    '    outs: [done.txt]',
    '',
  ].join('\n'),
};

/** How an older fluksio, which knows only proper-lockfile, locked a store. */
const olderFluksioLock = (dir: string) =>
  lockfileLock(dir, { realpath: false, stale: 30_000, update: 5_000, onCompromised: () => {} });

let repo: TestRepo | undefined;
let holder: FluksioProcess | undefined;
const scratch: string[] = [];
afterEach(async () => {
  await holder?.stop('SIGKILL');
  if (repo) {
    // A killed run's stage lives on: let it end before its folder goes.
    writeFileSync(join(repo.dir, 'release'), '');
    if (existsSync(join(repo.dir, 'started')) && holder)
      await fileAppears(join(repo.dir, 'done.txt'), holder);
    await repo.cleanup();
  }
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
  repo = undefined;
  holder = undefined;
});

/** A `fluksio run` whose stage is running, so it holds its store's lock until `release` appears. */
async function runHoldingStore(): Promise<{ holder: FluksioProcess; stateDir: string }> {
  repo = await makeRepo({ files: WAITING_PIPELINE });
  holder = spawnFluksio(['run'], { cwd: repo.dir });
  await fileAppears(join(repo.dir, 'started'), holder);
  return { holder, stateDir: join(repo.dir, '.fluksio') };
}

async function fileAppears(path: string, process: FluksioProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} did not appear; output:\n${process.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function scratchDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fluksio-lock-'));
  scratch.push(dir);
  await mkdir(join(dir, 'journal'));
  return join(dir, 'journal');
}

test('a store whose fluksio run was killed outright is taken at once by the next, while that run’s stage still runs', async () => {
  const { holder, stateDir } = await runHoldingStore();
  expect(readFileSync(join(stateDir, 'journal.lock-holder'), 'utf8').split('\n')[0]).toBe(
    String(holder.child.pid),
  );
  await holder.stop('SIGKILL');
  // What an older fluksio still respects for 30 s: the killed run left it behind.
  expect(existsSync(join(stateDir, 'journal.lock'))).toBe(true);

  const state = await openLocalState(stateDir, { waitMs: SHORT_WAIT_MS });
  expect(readFileSync(join(stateDir, 'journal.lock-holder'), 'utf8').split('\n')[0]).toBe(
    String(process.pid),
  );
  // The orphaned stage never held the lock: it is still waiting for `release`.
  expect(existsSync(join(repo!.dir, 'done.txt'))).toBe(false);
  await state.close();
});

test('a store a live fluksio run holds is waited for; a wait that runs out names its pid, and once the run ends the waiter takes it', async () => {
  const { holder, stateDir } = await runHoldingStore();
  await expect(openLocalState(stateDir, { waitMs: 300 })).rejects.toThrow(
    `The local store ${join(stateDir, 'journal')} is in use by another fluksio process (pid ${holder.child.pid}); wait for it to finish and try again`,
  );

  // Asked while the run still holds it (its stage waits for `release`, not yet written):
  // the waiter is told whom it waits for as the wait begins, once.
  const told: string[] = [];
  const waiting = openLocalState(stateDir, { waitMs: 60_000, onWait: (holderName) => told.push(holderName) });
  await vi.waitFor(() => expect(told).toEqual([`pid ${holder.child.pid}`]), { timeout: 30_000 });
  // A second run says so on its terminal rather than hanging silently.
  const second = spawnFluksio(['run'], { cwd: repo!.dir });
  await second.waitFor(
    new RegExp(
      `^Waiting for another fluksio process \\(pid ${holder.child.pid}\\) to finish with .*\\.fluksio`,
    ),
  );
  writeFileSync(join(repo!.dir, 'release'), '');
  expect(await holder.exited).toBe(0);
  const state = await waiting;
  await state.close();
  expect(told).toHaveLength(1);
  expect(await second.exited, second.output()).toBe(0);

  // Released cleanly: taken without waiting at all, and nobody is told of a wait.
  await (await openLocalState(stateDir, { waitMs: 0 })).close();
  await (
    await openLocalState(stateDir, { waitMs: 5_000, onWait: (holderName) => told.push(holderName) })
  ).close();
  expect(told).toHaveLength(1);
});

test('a dead run’s lock that an older fluksio has taken over since is not taken from it', async () => {
  const { holder, stateDir } = await runHoldingStore();
  await holder.stop('SIGKILL');
  const journalDir = join(stateDir, 'journal');
  // An older fluksio judged the dead run's lock stale and made its own in its place (the
  // file system may well give the new directory the same inode).
  await rmdir(`${journalDir}.lock`);
  const releaseOlder = await olderFluksioLock(journalDir);

  await expect(openLocalState(stateDir, { waitMs: 300 })).rejects.toThrow(
    `is in use by another fluksio process (pid unknown: an older fluksio, or one stopped less than 30 s ago)`,
  );
  await releaseOlder();
  await (await openLocalState(stateDir, { waitMs: 0 })).close();
});

test('an older fluksio, which knows only <dir>.lock, and this one never hold a store at once', async () => {
  const dir = await scratchDir();
  const releaseOlder = await olderFluksioLock(dir);
  await expect(lockDirectory(dir, 300)).rejects.toThrow(/in use by another fluksio process \(pid unknown/);
  await releaseOlder();

  // Waited for, saying so, until the older one lets go.
  const again = await olderFluksioLock(dir);
  const told: string[] = [];
  const waiting = lockDirectory(dir, 60_000, { onWait: (holderName) => told.push(holderName) });
  await vi.waitFor(() => expect(told).toEqual([expect.stringMatching(/^pid unknown: an older fluksio/)]), {
    timeout: 30_000,
  });
  await again();
  await (
    await waiting
  )();

  const release = await lockDirectory(dir, 0);
  await expect(olderFluksioLock(dir)).rejects.toMatchObject({ code: 'ELOCKED' });
  await release();
  await (
    await olderFluksioLock(dir)
  )();
});

test('where flock(1) is missing (macOS) the store is locked with <dir>.lock alone, which excludes and is excluded by a fluksio with flock(1)', async () => {
  const dir = await scratchDir();
  const withoutFlock = await lockDirectory(dir, 0, { flock: null });
  await expect(lockDirectory(dir, 300)).rejects.toThrow(/in use by another fluksio process/);
  const told: string[] = [];
  await expect(
    lockDirectory(dir, 300, { flock: null, onWait: (holderName) => told.push(holderName) }),
  ).rejects.toThrow(/in use by another fluksio process/);
  expect(told).toEqual(['pid unknown']);
  await expect(lockDirectory(dir, 300, { flock: null })).rejects.toThrow(
    `The local store ${dir} is in use by another fluksio process; wait for it to finish and try again`,
  );
  await withoutFlock();

  const withFlock = await lockDirectory(dir, 0);
  await expect(lockDirectory(dir, 300, { flock: null })).rejects.toThrow(/in use by another fluksio process/);
  await withFlock();
  await (
    await lockDirectory(dir, 0, { flock: null })
  )();
});

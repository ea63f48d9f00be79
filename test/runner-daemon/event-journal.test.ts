import { execFileSync } from 'node:child_process';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { ControlPlaneClient } from '../../client/control-plane-client.js';
import { JournaledEventQueue } from '../../runner/daemon/journaled-event-queue.js';
import { readEventJournal } from '../../runner/daemon/read-event-journal.js';
import { RemoteEventSink } from '../../runner/daemon/remote-event-sink.js';
import { memoryEventQueue } from '../../runner/event-queue.js';
import type { RunEvent } from '../../schemas/run-event.js';
import { emptyStageRecord } from '../../schemas/stage-record.js';
import { FakeControlPlane } from './helpers/fake-control-plane.js';
import { makeClaim } from './helpers/make-claim.js';

/** For a journal that must be readable. */
const unexpected = (error: unknown): never => {
  throw error;
};

let dir: string;
let disk: string;

beforeAll(async () => {
  // A disk that fills up is what the last test is about: a tmpfs is the one that can be
  // made full and freed on demand, and mounting one needs root.
  if (process.getuid?.() !== 0) {
    throw new Error(
      `This file mounts a 64 KiB tmpfs to fill it, which needs root; it runs as uid ${process.getuid?.()}`,
    );
  }
  disk = await mkdtemp(path.join(tmpdir(), 'fluksio-journal-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', disk]);
});
afterAll(async () => {
  if (!disk) return;
  execFileSync('umount', ['--lazy', disk]);
  await rm(disk, { recursive: true, force: true });
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-journal-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const at = '2026-12-03T12:00:00.000Z';
const started = (stage: string, seq: number): RunEvent => ({ type: 'stage.started', stage, at, seq });

test('events wait in the journal until acknowledged; a restarted runner sends them under their seqs, then its own, each once', async () => {
  const plane = new FakeControlPlane();
  await plane.start();
  try {
    const client = new ControlPlaneClient({
      url: plane.url,
      token: plane.token,
      minRetryDelayMs: 10,
      maxRetryDelayMs: 50,
    });
    const { claim } = plane.enqueue(makeClaim({ repoDir: dir, commit: 'a'.repeat(40) }));
    await client.claim(0, false);
    const run = { runId: claim.run.id, lease: claim.lease };
    const journal = path.join(dir, 'run.1.jsonl');
    const dead = new AbortController();
    const first = new RemoteEventSink({
      client,
      run,
      attempt: 1,
      mergeDelayMs: 5,
      journal: { file: journal },
      signal: dead.signal,
    });
    first.emit({ type: 'stage.started', stage: 'prepare', at });
    await first.flush();
    expect(statSync(journal).size).toBe(0);

    // The control plane takes nothing more; the stage's end waits in the journal when the runner dies.
    await plane.stop();
    first.emit({ type: 'stage.log', stage: 'prepare', lines: ['rows: 7'] });
    first.emit({ type: 'stage.finished', stage: emptyStageRecord('prepare', 'ran') });
    const unsent = await readEventJournal(journal, 1, unexpected);
    expect(unsent.map((event) => [event.seq, event.type])).toEqual([
      [1, 'stage.log'],
      [2, 'stage.finished'],
    ]);
    dead.abort();
    first.close();

    await plane.start();
    const second = new RemoteEventSink({
      client,
      run,
      attempt: 1,
      mergeDelayMs: 5,
      firstSeq: 1,
      unsent,
      journal: { file: journal },
    });
    second.emit({ type: 'stage.started', stage: 'train', at });
    await second.flush();
    expect(plane.eventsOf(run.runId).map((event) => [event.seq, event.type])).toEqual([
      [0, 'stage.started'],
      [1, 'stage.log'],
      [2, 'stage.finished'],
      [3, 'stage.started'],
    ]);
    // All acknowledged, the journal is emptied.
    expect(statSync(journal).size).toBe(0);
    second.close();
  } finally {
    await plane.stop();
  }
});

test('a journal is read from the control plane’s next seq, each event once, up to a line it could not take whole', async () => {
  const journal = path.join(dir, 'run.1.jsonl');
  const line = (event: RunEvent) => `${JSON.stringify(event)}\n`;
  await writeFile(
    journal,
    // Acknowledged events left before a truncation, an event journaled twice (sent again at
    // an earlier resume), then a line cut short by a kill mid-write and what followed it.
    [started('a', 3), started('b', 4), started('c', 5), started('b', 4), started('d', 6)].map(line).join('') +
      line(started('e', 7)).slice(0, 20) +
      line(started('f', 8)),
  );
  expect(
    (await readEventJournal(journal, 4, unexpected)).map((event) => [
      event.seq,
      'stage' in event && event.stage,
    ]),
  ).toEqual([
    [4, 'b'],
    [5, 'c'],
    [6, 'd'],
  ]);
  expect(await readEventJournal(journal, 9, unexpected)).toEqual([]);
  expect(await readEventJournal(path.join(dir, 'none.jsonl'), 0, unexpected)).toEqual([]);
});

test('a journal that cannot be read holds no event and says why, rather than failing the resumed attempt', async () => {
  const journal = path.join(dir, 'run.1.jsonl');
  await mkdir(journal);
  const errors: unknown[] = [];
  expect(await readEventJournal(journal, 0, (error) => errors.push(error))).toEqual([]);
  expect(errors).toMatchObject([{ code: 'EISDIR' }]);
});

test('a journal whose disk fills up keeps whole events up to the one refused, journals nothing after, and journals again once every event is acknowledged', async () => {
  const journal = path.join(disk, 'run.1.jsonl');
  const refusals: unknown[] = [];
  const queue = new JournaledEventQueue({
    queue: memoryEventQueue(),
    file: journal,
    onJournalRefused: (error) => refusals.push(error),
  });
  queue.push(started('a', 0));
  const filler = path.join(disk, 'filler');
  const fd = openSync(filler, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(512, 'x'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  // The rest of the page fills, then one event is refused mid-write and cut back off.
  let seq = 1;
  while (refusals.length === 0 && seq < 1000) queue.push(started(`s${seq}`, seq++));
  expect(refusals[0]).toMatchObject({ code: 'ENOSPC' });
  const refusedAt = seq - 1;
  await rm(filler);
  queue.push(started('later', seq++));
  expect(queue.length).toBe(seq);
  const text = await readFile(journal, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  expect((await readEventJournal(journal, 0, unexpected)).map((event) => event.seq)).toEqual(
    Array.from({ length: refusedAt }, (_, index) => index),
  );

  // Every event acknowledged: the journal is emptied, and takes the next ones again.
  queue.drop(queue.length);
  expect(statSync(journal).size).toBe(0);
  queue.push(started('next', seq));
  expect((await readEventJournal(journal, seq, unexpected)).map((event) => event.seq)).toEqual([seq]);
  expect(refusals).toHaveLength(1);
  queue.close();
});

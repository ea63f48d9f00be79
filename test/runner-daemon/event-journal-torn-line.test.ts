import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { JournaledEventQueue } from '../../runner/daemon/journaled-event-queue.js';
import { readEventJournal } from '../../runner/daemon/read-event-journal.js';
import { memoryEventQueue } from '../../runner/event-queue.js';
import type { RunEvent } from '../../schemas/run-event.js';

/** For a journal that must be readable. */
const unexpected = (error: unknown): never => {
  throw error;
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'fluksio-journal-torn-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const at = '2026-12-03T12:00:00.000Z';
const started = (stage: string, seq: number): RunEvent => ({ type: 'stage.started', stage, at, seq });

test('a journal a kill -9 left with a torn last line keeps the first event the resumed runner journals after it', async () => {
  const journal = path.join(dir, 'run.1.jsonl');
  // The runner killed mid-write: seq 3's line is cut off, without its newline.
  const whole = `${JSON.stringify(started('prepare', 2))}\n`;
  const torn = JSON.stringify(started('train', 3)).slice(0, 20);
  await writeFile(journal, whole + torn);
  // The control plane stored up to seq 2: the resumed runner numbers its events from 3.
  const queue = new JournaledEventQueue({ queue: memoryEventQueue(), file: journal });
  queue.push(started('train', 3));
  queue.push(started('evaluate', 4));
  queue.close();
  // Killed again before either was acknowledged: the next resume must find both.
  const unsent = await readEventJournal(journal, 3, unexpected);
  expect(unsent.map((event) => [event.seq, event.type === 'stage.started' ? event.stage : null])).toEqual([
    [3, 'train'],
    [4, 'evaluate'],
  ]);
  expect(await readFile(journal, 'utf8')).toContain(`${torn}\n`);
});

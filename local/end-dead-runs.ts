import { open, readdir, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { findFlock } from '../host/find-flock.js';
import { StageGroups, type LeftoverGroup } from '../runner/sandbox/stage-groups.js';
import { lockPidFile } from '../host/lock-pid-file.js';
import { PidFileHeldError } from '../host/pid-file-held-error.js';
import type { LocalJournalRecord } from '../schemas/local-journal-record.js';
import type { RunEvent } from '../schemas/run-event.js';
import { emptyStageRecord } from '../schemas/stage-record.js';
import { LogTail } from '../runner/output/log-tail.js';
import { liveStageLogFile } from './live-stage-logs.js';
import { localStorePaths, runStageGroupsDir } from './local-store-paths.js';
import { readRunJournal } from './read-run-journal.js';
import { journalFileOf } from './run-journal.js';

const LOCK_SUFFIX = '.lock';
/** The most bytes of a dead stage's live log read for its tail: LogTail keeps no more. */
const TAIL_BYTES = 64 * 1024;

/**
 * Ends, in their journals, the runs whose `fluksio run` process died without ending them
 * (kill -9, the OOM killer, a laptop that lost power): each such run is `abandoned`, saying
 * which process ended and which stages were running, and those stages `cancelled`, so the
 * commands that list runs stop calling them running. A run's process is known dead when
 * its process lock (lockRunProcess) can be taken: the kernel dropped it, so no timeout is
 * guessed and a run another terminal is executing, whose process holds it, is left alone.
 * Two readers at once end a run once: each reads the journal again holding the lock.
 * Returns how many runs it ended. Without flock(1) nothing can be told, and nothing is done.
 */
export async function endDeadRuns(journalDir: string): Promise<number> {
  const names = await readdir(journalDir).catch((): string[] => []);
  const lockFiles = names.filter((each) => each.endsWith(LOCK_SUFFIX));
  if (lockFiles.length === 0) return 0;
  const flock = await findFlock();
  if (flock === null) return 0;
  let ended = 0;
  for (const name of lockFiles) {
    // A store this process may read but not write (another user's, a read-only mount) is
    // shown as it is recorded: a command that reads runs never fails for not ending one.
    const outcome = await endDeadRun(journalDir, name.slice(0, -LOCK_SUFFIX.length), flock).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'EACCES' || error.code === 'EPERM' || error.code === 'EROFS') return 'left';
        throw error;
      },
    );
    if (outcome === 'ended') ended += 1;
  }
  return ended;
}

/** Ends one run whose process lock is free; 'left' when its process holds it or it has not started. */
async function endDeadRun(journalDir: string, runId: string, flock: string): Promise<'ended' | 'left'> {
  const lockFile = join(journalDir, `${runId}${LOCK_SUFFIX}`);
  const held = await lockPidFile(lockFile, { flock, waitMs: 0 }).catch((error: unknown) => {
    if (error instanceof PidFileHeldError) return null;
    throw error;
  });
  if (held === null) return 'left';
  try {
    // Its stages' processes, which no one reads any more, end before it is said to have.
    const { ended } = await new StageGroups(runStageGroupsDir(journalDir, runId)).killLeftovers();
    const outcome = await endJournal(journalDir, runId, pidOf(held.leftBehind), ended);
    // A run starting has its lock file before its first line: that lock is not ours to remove.
    if (outcome !== 'not started') await rm(lockFile, { force: true });
    return outcome === 'ended' ? 'ended' : 'left';
  } finally {
    await held.release();
  }
}

/** Appends the end of a run whose process is gone, unless its journal ended already. */
async function endJournal(
  journalDir: string,
  runId: string,
  pid: number | null,
  leftovers: readonly LeftoverGroup[],
): Promise<'ended' | 'finished' | 'not started'> {
  const file = journalFileOf(journalDir, runId);
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (text === null) return 'not started';
  const journal = await readRunJournal(file);
  // A damaged journal is doctor's to report; what follows its damage would not be read.
  if (journal.records.length === 0 || journal.damage !== null) return 'not started';
  if (journal.records.some((record) => record.type === 'run.finished')) return 'finished';

  const running = runningStages(journal.records);
  // What its stages printed last, from the live logs the run wrote (`.fluksio/live/`);
  // the last time the run wrote anything is as near as can be known to when it died.
  const liveDir = localStorePaths(dirname(journalDir)).liveDir;
  const tails = await Promise.all(
    running.map((stage) => readLiveTail(liveStageLogFile(liveDir, runId, stage.name))),
  );
  const diedAt = new Date(
    Math.max((await stat(file)).mtimeMs, ...tails.map((tail) => tail?.writtenAt.getTime() ?? 0)),
  );
  const recorder = pid === null ? 'fluksio run' : `fluksio run (pid ${pid})`;
  const events: RunEvent[] = running.map(({ name, startedAt }, index) => ({
    type: 'stage.finished',
    seq: nextSeq(journal.records) + index,
    stage: {
      ...emptyStageRecord(name, 'cancelled'),
      startedAt,
      finishedAt: diedAt.toISOString(),
      durationMs: Math.max(0, diedAt.getTime() - Date.parse(startedAt)),
      logTail: tails[index]?.text ?? '',
      error: `${recorder} ended while it ran`,
    },
  }));
  const records: LocalJournalRecord[] = [
    ...(events.length > 0 ? [{ type: 'run.events' as const, events }] : []),
    {
      type: 'run.finished',
      status: 'abandoned',
      reason:
        `${recorder} ended before the run did (killed, out of memory, a second Ctrl-C, or the machine stopped); ` +
        (running.length > 0
          ? `${running.map((stage) => stage.name).join(', ')} was running`
          : 'no stage was running') +
        (leftovers.length > 0
          ? `; the processes it left running were killed (${leftovers
              .map((group) => `${group.stage ?? 'a stage'}: pid ${group.pid}`)
              .join(', ')})`
          : ''),
      metrics: {},
      dirtyReasons: [],
      finishedAt: diedAt.toISOString(),
    },
  ];
  // Written after the last complete line: a line the process tore as it died is cut off.
  const complete = Buffer.byteLength(text.slice(0, text.lastIndexOf('\n') + 1));
  const lines = Buffer.from(records.map((record) => `${JSON.stringify(record)}\n`).join(''));
  const handle = await open(file, 'r+');
  try {
    await handle.write(lines, 0, lines.length, complete);
    await handle.truncate(complete + lines.length);
    await handle.datasync();
  } finally {
    await handle.close();
  }
  return 'ended';
}

/** The end of a stage's live log, as a stage record's tail, and when it was last written; null when there is none. */
async function readLiveTail(file: string): Promise<{ text: string; writtenAt: Date } | null> {
  const handle = await open(file, 'r').catch(() => null);
  if (handle === null) return null;
  try {
    const { size, mtime } = await handle.stat();
    const start = Math.max(0, size - TAIL_BYTES);
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(size - start), 0, size - start, start);
    const lines = buffer.subarray(0, bytesRead).toString('utf8').split('\n');
    if (start > 0) lines.shift(); // begun mid-line
    if (lines.at(-1) === '') lines.pop();
    const tail = new LogTail();
    for (const line of lines) tail.push(line);
    return { text: tail.text(), writtenAt: mtime };
  } finally {
    await handle.close();
  }
}

/** The stages a journal says started and never finished, in the order they started. */
function runningStages(records: readonly LocalJournalRecord[]): { name: string; startedAt: string }[] {
  const running = new Map<string, string>();
  for (const record of records) {
    if (record.type !== 'run.events') continue;
    for (const event of record.events) {
      if (event.type === 'stage.started' && !running.has(event.stage)) running.set(event.stage, event.at);
      if (event.type === 'stage.finished') running.delete(event.stage.name);
    }
  }
  return [...running].map(([name, startedAt]) => ({ name, startedAt }));
}

function nextSeq(records: readonly LocalJournalRecord[]): number {
  let last = -1;
  for (const record of records) {
    if (record.type === 'run.events') for (const event of record.events) last = Math.max(last, event.seq);
  }
  return last + 1;
}

/** The pid the dead holder wrote on the lock file's first line. */
function pidOf(leftBehind: string): number | null {
  const first = leftBehind.split('\n', 1)[0]?.trim() ?? '';
  return /^\d+$/.test(first) ? Number(first) : null;
}

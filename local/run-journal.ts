import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalJournalRecord } from '../schemas/local-journal-record.js';
import { lockRunProcess, type RunProcessLock } from './run-process-lock.js';

/** The journal file of a local run under a store's `journal/` folder. */
export function journalFileOf(journalDir: string, runId: string): string {
  return join(journalDir, `${runId}.jsonl`);
}

/**
 * A local run's journal. Lines are appended as the run goes and made durable by `sync`,
 * which the run's end calls: one fsync of the file and one of its folder per run, not one
 * per line (each costs tens of milliseconds on a busy disk, and a cached run is a handful
 * of lines). What a crash in the middle of a run can lose is that run's tail, which then
 * reads as interrupted; a cache entry the index got meanwhile stays true, since it is
 * written only from a stage that succeeded. A line is one JSON record written by one
 * write, so a crash can only leave the last line torn, which readers skip. The journal's
 * process holds the run's process lock from before its first line to after its last, so a
 * reader can tell a run whose process died from one that goes on (endDeadRuns).
 */
export class RunJournal {
  private writing: Promise<void> = Promise.resolve();
  /** Bytes of complete lines on disk: the next line is written here. */
  private size = 0;

  private constructor(
    private readonly handle: FileHandle,
    private readonly journalDir: string,
    private readonly lock: RunProcessLock,
  ) {}

  /** Creates the journal of a new run (refusing one that exists) with its first record. */
  static async create(journalDir: string, runId: string, first: LocalJournalRecord): Promise<RunJournal> {
    const lock = await lockRunProcess(journalDir, runId);
    let journal: RunJournal;
    try {
      journal = new RunJournal(await open(journalFileOf(journalDir, runId), 'wx'), journalDir, lock);
    } catch (error) {
      await lock.release();
      throw error;
    }
    try {
      await journal.append(first);
    } catch (error) {
      await journal.close();
      throw error;
    }
    return journal;
  }

  /** Appends one record (in call order); `sync` makes it durable. */
  append(record: LocalJournalRecord): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(record)}\n`);
    const appended = this.writing.then(async () => {
      // Written at the end of the last complete line, and cut back there on failure: a
      // line half written by a failed write (a full disk) must not prefix the next one.
      try {
        await this.handle.write(line, 0, line.length, this.size);
      } catch (error) {
        await this.handle.truncate(this.size).catch(() => {});
        throw error;
      }
      this.size += line.length;
    });
    this.writing = appended.catch(() => {});
    return appended;
  }

  /** Resolves once every record appended so far, and the file's name, survive a crash. */
  async sync(): Promise<void> {
    await this.writing;
    await this.handle.datasync();
    const dir = await open(this.journalDir, 'r');
    await dir.sync().finally(() => dir.close());
  }

  /** Closes the file, then lets go of the run's process lock: the run is over, however it ended. */
  async close(): Promise<void> {
    try {
      await this.writing;
      await this.handle.close();
    } finally {
      await this.lock.release();
    }
  }
}

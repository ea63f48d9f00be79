import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { LocalJournalRecord } from '../../schemas/local-journal-record.js';

/** The journal file of a local run under a store's `journal/` folder. */
export function journalFileOf(journalDir: string, runId: string): string {
  return join(journalDir, `${runId}.jsonl`);
}

/**
 * A local run's journal, appended to and fsync'd line by line: once `append` resolves, the
 * record survives a crash. A line is one JSON record written by one write, so a crash can
 * only leave the last line torn, which readers skip (and the run then reads as interrupted).
 */
export class RunJournal {
  private writing: Promise<void> = Promise.resolve();
  /** Bytes of complete lines on disk: the next line is written here. */
  private size = 0;

  private constructor(private readonly handle: FileHandle) {}

  /** Creates the journal of a new run (refusing one that exists) with its first record. */
  static async create(journalDir: string, runId: string, first: LocalJournalRecord): Promise<RunJournal> {
    const handle = await open(journalFileOf(journalDir, runId), 'wx');
    const journal = new RunJournal(handle);
    try {
      await journal.append(first);
      // The file's name must survive a crash too, not only its bytes.
      const dir = await open(journalDir, 'r');
      await dir.sync().finally(() => dir.close());
    } catch (error) {
      await handle.close();
      throw error;
    }
    return journal;
  }

  /** Appends one record and waits until it is on disk; appends happen in call order. */
  append(record: LocalJournalRecord): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(record)}\n`);
    const appended = this.writing.then(async () => {
      // Written at the end of the last complete line, and cut back there on failure: a
      // line half written by a failed write (a full disk) must not prefix the next one.
      try {
        await this.handle.write(line, 0, line.length, this.size);
        await this.handle.datasync();
      } catch (error) {
        await this.handle.truncate(this.size).catch(() => {});
        throw error;
      }
      this.size += line.length;
    });
    this.writing = appended.catch(() => {});
    return appended;
  }

  async close(): Promise<void> {
    await this.writing;
    await this.handle.close();
  }
}

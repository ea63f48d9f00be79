import { readFile } from 'node:fs/promises';
import { LocalJournalRecord } from '../schemas/local-journal-record.js';

/** A run's journal as read back: its readable records, and what is wrong past them. */
export interface ReadRunJournal {
  records: LocalJournalRecord[];
  /** A torn last line: the writer stopped mid-line (a crash); the records before it stand. */
  torn: boolean;
  /** A complete line that is not a record, naming it; nothing from it on is read. */
  damage: string | null;
}

/**
 * Reads a run's journal (`<store>/journal/<run>.jsonl`). Only complete lines count: a
 * line being appended by a running `fluksio run`, or torn by a crash, is not read.
 */
export async function readRunJournal(file: string): Promise<ReadRunJournal> {
  const text = await readFile(file, 'utf8');
  const lines = text.split('\n');
  // What follows the last newline is a line not (yet, or ever) complete.
  const torn = lines.pop() !== '';
  const records: LocalJournalRecord[] = [];
  for (const [index, line] of lines.entries()) {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return { records, torn, damage: `${file}:${index + 1}: not JSON` };
    }
    const parsed = LocalJournalRecord.safeParse(json);
    if (!parsed.success) {
      return {
        records,
        torn,
        damage: `${file}:${index + 1}: not a journal record (${parsed.error.issues[0]?.message ?? 'invalid'})`,
      };
    }
    records.push(parsed.data);
  }
  return { records, torn, damage: null };
}

import { readdir } from 'node:fs/promises';
import type { Database } from '../store/db/database.js';
import { applyLocalJournal, localJournalProgress } from '../store/events/apply-local-journal.js';
import { endDeadRuns } from './end-dead-runs.js';
import { journalFileOf } from './run-journal.js';
import { readRunJournal } from './read-run-journal.js';

/** What bringing the database up to date from the journals did. */
export interface JournalSync {
  /** Runs with lines applied now. */
  runsUpdated: number;
  /** Journal lines that are damaged (named by file and line): their run stops before them. */
  damaged: string[];
  /** Stopped (`signal`) before every journal was applied; running it again goes on. */
  stopped: boolean;
}

/**
 * Brings the embedded database up to date with the local store's run journals: applies,
 * run by run, the complete lines it does not hold yet. Journals whose final line is
 * applied are not read again, so this costs a directory listing once history is applied.
 * Idempotent: it can be interrupted at any point and run again. A run whose `fluksio run`
 * died without ending it is ended first (endDeadRuns), so no reader shows it running.
 * Aborting `signal` stops it between two runs.
 */
export async function syncLocalJournal(
  db: Database,
  journalDir: string,
  signal?: AbortSignal,
): Promise<JournalSync> {
  await endDeadRuns(journalDir);
  const names = await readdir(journalDir).catch((): string[] => []);
  const progress = await localJournalProgress({ db });
  const result: JournalSync = { runsUpdated: 0, damaged: [], stopped: false };
  // Run ids are ULIDs: in name order, runs apply in the order they were made.
  for (const name of names.filter((each) => each.endsWith('.jsonl')).sort()) {
    if (signal?.aborted) return { ...result, stopped: true };
    const runId = name.slice(0, -'.jsonl'.length);
    const known = progress.get(runId);
    if (known?.finished) continue;
    const journal = await readRunJournal(journalFileOf(journalDir, runId));
    if (journal.damage) result.damaged.push(journal.damage);
    if (journal.records.length === 0) continue;
    const first = journal.records[0];
    if (first?.type !== 'run.created' || first.run.id !== runId) {
      result.damaged.push(`${journalFileOf(journalDir, runId)}:1: not the run.created line of run ${runId}`);
      continue;
    }
    const applied = await applyLocalJournal({
      db,
      runId,
      records: journal.records,
      applied: known?.applied ?? 0,
    });
    if (applied > 0) result.runsUpdated += 1;
  }
  return result;
}

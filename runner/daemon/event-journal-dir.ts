import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * Where a runner keeps each attempt's event journal (journaled-event-queue.ts): in its work
 * directory, so the runner started after a kill finds the journal of a run it resumes.
 * Unlike the event spool it is not emptied at start-up, only of the runs not resumed
 * (removeEventJournals).
 */
export function eventJournalDir(workDir: string): string {
  return path.join(workDir, 'event-journal');
}

/** The journal of one attempt of a run: `RUN.ATTEMPT.jsonl` (a run id holds no dot). */
export function eventJournalFile(dir: string, runId: string, attempt: number): string {
  return path.join(dir, `${runId}.${attempt}.jsonl`);
}

/** Removes the journals of every run `keep` does not name: no runner will send them. */
export async function removeEventJournals(dir: string, keep: (runId: string) => boolean): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    names
      .filter((name) => !keep(name.includes('.') ? name.slice(0, name.indexOf('.')) : name))
      .map((name) => rm(path.join(dir, name), { recursive: true, force: true })),
  );
}

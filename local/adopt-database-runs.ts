import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { asc } from 'drizzle-orm';
import { runs } from '../schemas/tables/runs.js';
import { journalOfRun } from '../store/events/journal-of-run.js';
import { openLocalDatabase } from '../store/db/open-local-database.js';
import { localStorePaths } from './local-store-paths.js';
import { indexFromJournals, rebuildLocalIndex } from './rebuild-local-index.js';
import { journalFileOf } from './run-journal.js';

/**
 * Once, for a store recorded before fluksio kept run journals (its runs only in the
 * database): writes a journal for every run the database holds and builds the index from
 * them, so its cache entries and baselines serve `fluksio run` as before. The journals
 * appear all at once (written aside, then renamed into place); until they do, this is
 * done again, and it changes nothing in the database twice.
 */
export async function adoptDatabaseRuns(stateDir: string): Promise<void> {
  const paths = localStorePaths(stateDir);
  const building = `${paths.journalDir}.adopting-${randomBytes(6).toString('hex')}`;
  const database = await openLocalDatabase(paths.databaseDir, { waitMs: 120_000 });
  try {
    await mkdir(building, { recursive: true });
    const ids = await database.db.select({ id: runs.id }).from(runs).orderBy(asc(runs.id));
    for (const { id } of ids) {
      const records = await journalOfRun({ db: database.db, runId: id });
      await writeFile(
        journalFileOf(building, id),
        records.map((record) => `${JSON.stringify(record)}\n`).join(''),
      );
    }
  } finally {
    await database.close();
  }
  try {
    await rename(building, paths.journalDir);
  } catch (error) {
    // Another fluksio adopted the same store meanwhile: its journals serve as well.
    if (!existsSync(paths.journalDir)) throw error;
    return;
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  await rebuildLocalIndex(paths.indexDir, await indexFromJournals(paths.journalDir));
}

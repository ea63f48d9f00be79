import { asc } from 'drizzle-orm';
import { runners, type RunnerRow } from '../../schemas/tables/runners.js';
import type { Database } from '../db/database.js';

/** Every registered runner, by name (`fluksio runners`). */
export async function listRunners({ db }: { db: Database }): Promise<RunnerRow[]> {
  return db.select().from(runners).orderBy(asc(runners.name));
}

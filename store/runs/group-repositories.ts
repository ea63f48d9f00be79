import { eq } from 'drizzle-orm';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/** The repositories whose runs carry `groupId`: one for any sweep fluksio made, none for an unknown id. */
export async function groupRepositories({
  db,
  groupId,
}: {
  db: Database;
  groupId: string;
}): Promise<string[]> {
  const rows = await db
    .selectDistinct({ repository: runs.repository })
    .from(runs)
    .where(eq(runs.groupId, groupId))
    .limit(2);
  return rows.map((row) => row.repository);
}

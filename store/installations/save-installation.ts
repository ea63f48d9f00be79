import { sql } from 'drizzle-orm';
import { installations } from '../../schemas/tables/installations.js';
import type { Database } from '../db/database.js';
import { excluded } from '../db/excluded.js';

/** Records an installation of the GitHub App as its latest `installation` event describes it. */
export async function saveInstallation({
  db,
  installation,
}: {
  db: Database;
  installation: { id: number; owner: string; suspended: boolean };
}): Promise<void> {
  await db
    .insert(installations)
    .values(installation)
    .onConflictDoUpdate({
      target: installations.id,
      set: {
        owner: excluded(installations.owner),
        suspended: excluded(installations.suspended),
        updatedAt: sql`now()`,
      },
    });
}

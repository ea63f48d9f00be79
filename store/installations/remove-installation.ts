import { eq } from 'drizzle-orm';
import { installations } from '../../schemas/tables/installations.js';
import type { Database } from '../db/database.js';

/** Forgets an installation the App was uninstalled from. Its runs keep their history. */
export async function removeInstallation({
  db,
  installationId,
}: {
  db: Database;
  installationId: number;
}): Promise<void> {
  await db.delete(installations).where(eq(installations.id, installationId));
}

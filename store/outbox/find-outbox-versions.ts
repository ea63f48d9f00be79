import { eq } from 'drizzle-orm';
import type { Database } from '../db/database.js';
import { outboxTable, type OutboxTarget } from './outbox-target.js';

/** A target's render and sent versions; null when it has no row. */
export async function findOutboxVersions({
  db,
  target,
}: {
  db: Database;
  target: OutboxTarget;
}): Promise<{ renderVersion: number; sentVersion: number } | null> {
  const { table, key, renderVersion, sentVersion } = outboxTable(target.kind);
  const [row] = await db.select({ renderVersion, sentVersion }).from(table).where(eq(key, target.id));
  return row ?? null;
}

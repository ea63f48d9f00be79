import { lt } from 'drizzle-orm';
import type { Database } from '../db/database.js';
import { outboxTable, type OutboxTarget } from './outbox-target.js';

const KINDS: readonly OutboxTarget['kind'][] = ['check', 'notice', 'group'];

/**
 * The targets GitHub does not show the latest render of (sent version below render
 * version), at most `limit` of each kind: what the outbox's reconciler enqueues again
 * after a job was lost (Redis flushed or failed over, a notify that could not enqueue).
 */
export async function listUnsentOutboxTargets({
  db,
  limit,
}: {
  db: Database;
  limit: number;
}): Promise<OutboxTarget[]> {
  const lists = await Promise.all(
    KINDS.map(async (kind) => {
      const { table, key, renderVersion, sentVersion } = outboxTable(kind);
      const rows = await db
        .select({ id: key })
        .from(table)
        .where(lt(sentVersion, renderVersion))
        .limit(limit);
      return rows.map(({ id }) => ({ kind, id }));
    }),
  );
  return lists.flat();
}

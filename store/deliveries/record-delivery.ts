import { and, eq, isNotNull, or, sql } from 'drizzle-orm';
import { deliveries, type NewDeliveryRow } from '../../schemas/tables/deliveries.js';
import type { Database } from '../db/database.js';
import { payloadDigestSql } from './payload-digest-sql.js';

/**
 * What storing a delivery did, and the id of the stored delivery it came to: `stored` it
 * for the first time; `reopened` the stored one (the same id, or the same payload) that
 * was given up on, to be processed again; or nothing, that one being `known` (waiting, in
 * progress or processed).
 */
export interface RecordedDelivery {
  outcome: 'stored' | 'reopened' | 'known';
  /** The id to process: the copy's own when stored, else the stored delivery's. */
  deliveryId: string;
}

/**
 * Stores a webhook delivery as it arrived, unless one with the same id, or with the same
 * payload, is stored already. GitHub signs the body and not `X-GitHub-Delivery`, so the
 * same signed body under a new id is the same event — GitHub's Redeliver (which keeps the
 * id), the same delivery sent twice at once, or a captured delivery replayed by anyone —
 * and the first copy is the one kept. A copy of a delivery that was given up on reopens
 * it — no longer failed, its error cleared, its attempts counted again from one (not zero:
 * an earlier attempt may have replied, so the next one is a retry, which looks for its
 * reply before replying) — as someone pressing Redeliver on GitHub asks for, and it is processed again under its own id, so it
 * makes what it did not make yet and nothing twice (its runs' trigger keys); any other copy
 * changes nothing, so a processed delivery is never processed twice.
 */
export async function recordDelivery({
  db,
  delivery,
}: {
  db: Database;
  delivery: Pick<NewDeliveryRow, 'id' | 'event' | 'action' | 'installationId' | 'payload'>;
}): Promise<RecordedDelivery> {
  const digest = payloadDigestSql(delivery.payload);
  // No conflict target: a copy conflicts on the id or on the digest, and either is a copy.
  const [inserted] = await db
    .insert(deliveries)
    .values({ ...delivery, payloadDigest: digest })
    .onConflictDoNothing()
    .returning({ id: deliveries.id });
  if (inserted) return { outcome: 'stored', deliveryId: inserted.id };
  // The delivery with this id first (it alone was stored under it), else the one with this payload.
  const [stored] = await db
    .select({ id: deliveries.id, failedAt: deliveries.failedAt })
    .from(deliveries)
    .where(or(eq(deliveries.id, delivery.id), eq(deliveries.payloadDigest, digest)))
    .orderBy(sql`${deliveries.id} = ${delivery.id} desc`)
    .limit(1);
  // Neither is there any more: a concurrent statement would have to have deleted it.
  if (!stored) throw new Error(`Delivery ${delivery.id} conflicted with a stored delivery that is gone`);
  if (stored.failedAt === null) return { outcome: 'known', deliveryId: stored.id };
  const [reopened] = await db
    .update(deliveries)
    .set({ failedAt: null, attempts: 1, lastError: null })
    .where(and(eq(deliveries.id, stored.id), isNotNull(deliveries.failedAt)))
    .returning({ id: deliveries.id });
  // Another copy reopened it a moment before: that copy's intake enqueues it.
  return { outcome: reopened ? 'reopened' : 'known', deliveryId: stored.id };
}

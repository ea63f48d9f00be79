import { sql } from 'drizzle-orm';
import { bigint, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/**
 * A webhook delivery from GitHub as it arrived (DESIGN §8): stored, keyed by its
 * `X-GitHub-Delivery` id and by the digest of its payload, before anything is done about
 * it, so the endpoint answers at once, a redelivery is recognised — also a signed body
 * replayed under another id, GitHub signing the body and not the header — and a delivery
 * whose job was lost (Redis flushed, a replica killed) is found again by the reconciler
 * and processed.
 */
export const deliveries = pgTable(
  'deliveries',
  {
    /** The `X-GitHub-Delivery` header: unique per delivery, kept by GitHub's redeliveries. */
    id: text('id').primaryKey(),
    /** The `X-GitHub-Event` header: `push`, `pull_request`, `issue_comment`, … */
    event: text('event').notNull(),
    action: text('action'),
    installationId: bigint('installation_id', { mode: 'number' }),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    /**
     * The hex sha256 of the stored payload's `jsonb` text (payloadDigestSql): what GitHub
     * signed, so the identity of the event whatever `X-GitHub-Delivery` came with it. Unique:
     * a body stored once is never stored, nor processed, a second time under another id. Null
     * only for a copy that was stored twice before the column existed (migration 0022).
     */
    payloadDigest: text('payload_digest'),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull().defaultNow(),
    /** Set once the delivery was processed to the end; never processed twice after. */
    processedAt: timestamp('processed_at', { withTimezone: true }),
    /** How many times a worker began processing it. */
    attempts: integer('attempts').notNull().default(0),
    /** The last failure's message, for an operator (cleared when it succeeds). */
    lastError: text('last_error'),
    /**
     * Set when processing was given up (a payload that cannot be read, or every retry
     * failed): the reconciler leaves it alone, and `last_error` says why.
     */
    failedAt: timestamp('failed_at', { withTimezone: true }),
  },
  (table) => [
    // The reconciler reads the deliveries still to process, oldest first.
    index('deliveries_unprocessed_idx')
      .on(table.receivedAt)
      .where(sql`processed_at is null and failed_at is null`),
    uniqueIndex('deliveries_payload_digest_unique').on(table.payloadDigest),
  ],
);
export type DeliveryRow = typeof deliveries.$inferSelect;
export type NewDeliveryRow = typeof deliveries.$inferInsert;

import { bigint, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Which repository may read a blob (DESIGN §6): blobs are stored once by digest, but a
 * runner reads only blobs its run's repository uploaded, so one repository's outputs never
 * leak to another's runs through a guessed digest.
 */
export const blobRefs = pgTable(
  'blob_refs',
  {
    repository: text('repository').notNull(),
    digest: text('digest').notNull(),
    size: bigint('size', { mode: 'number' }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ name: 'blob_refs_pkey', columns: [table.repository, table.digest] })],
);
export type BlobRefRow = typeof blobRefs.$inferSelect;
export type NewBlobRefRow = typeof blobRefs.$inferInsert;

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
    /**
     * When a run last relied on the blob: uploaded it, or was told it is stored (HEAD) and
     * skipped the upload, or read it back. `fluksio gc` keeps a ref confirmed within its
     * cut-off, because such a run names the blob only once its stage's finish arrives.
     */
    confirmedAt: timestamp('confirmed_at', { withTimezone: true }).notNull().defaultNow(),
    /**
     * The run that last confirmed it; while that run is queued or running, gc keeps the ref.
     * Earlier confirmers are not recorded: gc keeps the ref while any queued or running run
     * of the repository created at or before confirmedAt exists (see gcStore).
     */
    confirmedBy: text('confirmed_by'),
  },
  (table) => [primaryKey({ name: 'blob_refs_pkey', columns: [table.repository, table.digest] })],
);
export type BlobRefRow = typeof blobRefs.$inferSelect;
export type NewBlobRefRow = typeof blobRefs.$inferInsert;

import { sql } from 'drizzle-orm';
import { boolean, check, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The one blob store this database's blobs are in (app/blobs/bind-blob-store.ts): its id,
 * which the store keeps too (a `fluksio-store-id` object or file), and where it was last
 * found, bound by the first `fluksio gc --server`. A store that is not this database's is
 * refused before gc deletes anything from it; one holding another database's id, at the
 * control plane's start too.
 */
export const blobStoreBinding = pgTable(
  'blob_store_binding',
  {
    /** Always true: the table holds one row. */
    one: boolean('one').primaryKey().default(true),
    storeId: text('store_id').notNull(),
    /** `s3://bucket` or the directory, as BlobStorage.location says. */
    location: text('location').notNull(),
    boundAt: timestamp('bound_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [check('blob_store_binding_one', sql`${table.one}`)],
);
export type BlobStoreBindingRow = typeof blobStoreBinding.$inferSelect;

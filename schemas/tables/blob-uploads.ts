import { pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The uploads of a blob to the control plane's store, recorded (store/blobs/record-blob-upload.ts)
 * before its bytes are written under its digest, under a lock on the digest that gc's
 * deletion takes too (store/blobs/blob-deletion-guard.ts): gc deletes no blob an upload
 * began writing since gc started, or whose uploading run is unfinished, so a run that
 * uploads the bytes gc was about to delete never names a lost blob (DESIGN §10).
 */
export const blobUploads = pgTable(
  'blob_uploads',
  {
    digest: text('digest').notNull(),
    runId: text('run_id').notNull(),
    /** When that run's latest upload of the digest began. */
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ name: 'blob_uploads_pkey', columns: [table.digest, table.runId] })],
);
export type BlobUploadRow = typeof blobUploads.$inferSelect;

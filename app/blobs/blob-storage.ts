import type { Readable } from 'node:stream';
import type { BlobDigest } from '../../schemas/blob-digest.js';

/** The object (or file) at a store's root that holds its id: outside every blob's key. */
export const STORE_ID_NAME = 'fluksio-store-id';

/**
 * The control plane's content-addressed blob store: a directory (DirectoryBlobStorage) or
 * an S3 bucket (S3BlobStorage). Who may read what is not decided here but by the blob
 * references in the database; a blob is recorded only once its bytes were verified
 * against its digest (by the store's checksum, or by the control plane hashing them: see
 * S3StorageSettings.verifyChecksums).
 */
export interface BlobStorage {
  /** Where blobs are, for the log: a directory or `s3://bucket`. */
  readonly location: string;
  /**
   * Resolves when the store can be used (the directory exists or can be made; the bucket
   * answers a HeadBucket); else rejects with a sentence naming what to fix. Checked at
   * startup and by `/readyz`.
   */
  check(): Promise<void>;
  /**
   * The store's id (STORE_ID_NAME at its root, app/blobs/bind-blob-store.ts), or null
   * when it has none yet.
   */
  readStoreId(): Promise<string | null>;
  /** Writes the store's id (STORE_ID_NAME at its root). */
  writeStoreId(storeId: string): Promise<void>;
  /** The size of a stored blob, or null when it is not stored. */
  size(digest: BlobDigest): Promise<number | null>;
  /** A small blob's bytes (a directory manifest), or null when absent or larger than `maxBytes`. */
  readSmall(digest: BlobDigest, maxBytes: number): Promise<Buffer | null>;
  /**
   * The stored bytes, unverified, for a caller that verifies them as they pass: the run
   * pages' downloads, which pass through the control plane on any store for that reason.
   * The caller checked that the blob exists.
   */
  openRead(digest: BlobDigest): Promise<Readable>;
  /** How bytes move between callers and the store. */
  readonly transfers: ProxiedBlobTransfers | PresignedBlobTransfers;
}

/** Bytes pass through the control plane's blob routes. */
export interface ProxiedBlobTransfers {
  via: 'control-plane';
  /** The blob's bytes; the caller checked that it exists. */
  read(digest: BlobDigest): Readable;
  /**
   * Stores what `body` carries under `digest` once verified: BlobDigestMismatchError when
   * it hashes to something else, BlobTooLargeError past `maxBytes`, and nothing stored
   * either way. Resolves with the size.
   */
  write(digest: BlobDigest, body: Readable, maxBytes: number): Promise<number>;
}

/** Callers move bytes straight to and from the store with presigned URLs. */
export interface PresignedBlobTransfers {
  via: 'url';
  /** A short-lived URL that GETs the blob. */
  downloadUrl(digest: BlobDigest): Promise<string>;
  /** A short-lived URL that PUTs `size` bytes hashing to `digest` into a place of this upload's own. */
  startUpload(upload: { digest: BlobDigest; size: number; runId: string }): Promise<DirectUpload>;
  /**
   * Checks what was uploaded (size, and checksum where the store keeps one), then moves it
   * under its digest. Rejects with BlobUploadRejectedError (and keeps nothing) when it is
   * not what was promised. Resolves with the size.
   */
  finishUpload(upload: {
    digest: BlobDigest;
    size: number;
    runId: string;
    uploadId: string;
  }): Promise<number>;
}

/** A presigned upload: where to PUT, with which headers, until when. */
export interface DirectUpload {
  uploadId: string;
  url: string;
  headers: Record<string, string>;
  expiresAt: Date;
}

import { createHash, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type HeadObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { BlobDigest, blobDigest } from '../../schemas/blob-digest.js';
import type { BlobDeletionOptions } from '../../store/blobs/blob-deletion-guard.js';
import type { S3StorageSettings } from './blob-storage-settings.js';
import {
  STORE_ID_NAME,
  type BlobStorage,
  type DirectUpload,
  type PresignedBlobTransfers,
} from './blob-storage.js';
import { BlobUploadRejectedError } from './blob-upload-errors.js';
import { S3StoreError } from './s3-store-error.js';

/** What a sweep of unreferenced objects removed. */
export interface S3Sweep {
  blobsDeleted: number;
  bytesFreed: number;
}

/** Keys per DeleteObjects request: S3's limit. */
const KEYS_PER_DELETE = 1000;

/**
 * Blobs in an S3 bucket (or an S3-compatible store): `sha256/<hex>`, each uploaded first
 * to `uploads/<run>/<upload id>` with a presigned PUT that carries its length and its
 * SHA-256 (`x-amz-checksum-sha256`, which S3 verifies), then checked with a HEAD and
 * copied under its digest by the control plane, server-side. The upload's own key is
 * what proves the runner had the bytes (a digest alone opens nothing, DESIGN §6), and a
 * failed or lying upload never reaches `sha256/`. Bytes never pass through the control
 * plane. A request that fails rejects with S3StoreError, naming the bucket, the endpoint
 * and the setting to check.
 */
export class S3BlobStorage implements BlobStorage {
  readonly transfers: PresignedBlobTransfers = {
    via: 'url',
    downloadUrl: (digest) => this.downloadUrl(digest),
    startUpload: (upload) => this.startUpload(upload),
    finishUpload: (upload) => this.finishUpload(upload),
  };
  private readonly client: S3Client;

  constructor(private readonly settings: S3StorageSettings) {
    this.client = new S3Client({
      region: settings.region,
      forcePathStyle: settings.forcePathStyle,
      ...(settings.endpoint === null ? {} : { endpoint: settings.endpoint }),
      ...(settings.credentials === null ? {} : { credentials: settings.credentials.forSdk() }),
      // Only the checksums fluksio asks for: S3-compatible stores refuse the SDK's default CRC32 trailers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  get location(): string {
    return `s3://${this.settings.bucket}`;
  }

  /** The bucket answers a HeadBucket: it exists there, and the credentials may use it. */
  async check(): Promise<void> {
    await this.send('HeadBucket', () =>
      this.client.send(new HeadBucketCommand({ Bucket: this.settings.bucket })),
    );
  }

  async readStoreId(): Promise<string | null> {
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: STORE_ID_NAME }),
      );
      return object.Body ? (await object.Body.transformToString()).trim() : null;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw new S3StoreError('GetObject', this.settings, error);
    }
  }

  async writeStoreId(storeId: string): Promise<void> {
    await this.send('PutObject', () =>
      this.client.send(
        new PutObjectCommand({ Bucket: this.settings.bucket, Key: STORE_ID_NAME, Body: `${storeId}\n` }),
      ),
    );
  }

  async size(digest: BlobDigest): Promise<number | null> {
    const head = await this.head(blobKey(digest));
    if (head === null) return null;
    // An object overwritten without its checksum (or with another) is not this blob any more.
    if (this.settings.verifyChecksums && head.ChecksumSHA256 !== checksumOf(digest)) return null;
    return head.ContentLength ?? null;
  }

  async readSmall(digest: BlobDigest, maxBytes: number): Promise<Buffer | null> {
    const size = await this.size(digest);
    if (size === null || size > maxBytes) return null;
    try {
      const object = await this.client.send(
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: blobKey(digest) }),
      );
      return object.Body ? Buffer.from(await object.Body.transformToByteArray()) : null;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw new S3StoreError('GetObject', this.settings, error);
    }
  }

  async openRead(digest: BlobDigest): Promise<Readable> {
    const object = await this.send('GetObject', () =>
      this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: blobKey(digest) })),
    );
    // In Node, the SDK's body is the response's IncomingMessage.
    if (!(object.Body instanceof Readable))
      throw new Error(`${this.location} answered ${digest} without a body`);
    return object.Body;
  }

  /** Forgets the SDK's connections. */
  close(): void {
    this.client.destroy();
  }

  /**
   * Deletes the blobs `live` does not name whose objects are older than `cutoffMs`, and
   * uploads never finished, older than a day (`fluksio gc`). The age matters as it does
   * on disk: a stage still running has uploaded blobs nothing names until it ends. The
   * chosen blobs go in batches, under `options.guard` when given (openBlobDeletionGuard).
   */
  async deleteUnreferenced(
    live: ReadonlySet<string>,
    cutoffMs: number,
    options: BlobDeletionOptions = {},
  ): Promise<S3Sweep> {
    const sweep: S3Sweep = { blobsDeleted: 0, bytesFreed: 0 };
    const sizes = new Map<string, number>();
    const flush = async (): Promise<void> => {
      const chosen = [...sizes.keys()];
      if (chosen.length === 0) return;
      await options.onDecided?.(chosen);
      const remove = (digests: string[]): Promise<void> =>
        this.deleteKeys(digests.map((digest) => blobKey(digest as BlobDigest)));
      const removed = options.guard ? await options.guard(chosen, remove) : (await remove(chosen), chosen);
      for (const digest of removed) {
        sweep.blobsDeleted += 1;
        sweep.bytesFreed += sizes.get(digest) ?? 0;
      }
      sizes.clear();
    };
    for await (const object of this.list('sha256/')) {
      const digest = `sha256:${object.key.slice('sha256/'.length)}`;
      if (live.has(digest) || object.modifiedMs >= cutoffMs) continue;
      sizes.set(digest, object.size);
      if (sizes.size >= KEYS_PER_DELETE) await flush();
    }
    await flush();
    const leftovers: string[] = [];
    for await (const object of this.list('uploads/')) {
      if (object.modifiedMs < Date.now() - 86_400_000) leftovers.push(object.key);
    }
    await this.deleteKeys(leftovers);
    return sweep;
  }

  private async deleteKeys(keys: string[]): Promise<void> {
    for (let start = 0; start < keys.length; start += KEYS_PER_DELETE) {
      await this.send('DeleteObjects', () =>
        this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.settings.bucket,
            Delete: {
              Objects: keys.slice(start, start + KEYS_PER_DELETE).map((Key) => ({ Key })),
              Quiet: true,
            },
          }),
        ),
      );
    }
  }

  private async downloadUrl(digest: BlobDigest): Promise<string> {
    return this.send('presigned GetObject', () =>
      getSignedUrl(
        this.client,
        new GetObjectCommand({ Bucket: this.settings.bucket, Key: blobKey(digest) }),
        {
          expiresIn: this.expiresInSeconds(),
        },
      ),
    );
  }

  private async startUpload({
    digest,
    size,
    runId,
  }: {
    digest: BlobDigest;
    size: number;
    runId: string;
  }): Promise<DirectUpload> {
    const uploadId = randomUUID();
    const checksum = checksumOf(digest);
    const url = await this.send('presigned PutObject', () =>
      getSignedUrl(
        this.client,
        new PutObjectCommand({
          Bucket: this.settings.bucket,
          Key: uploadKey(runId, uploadId),
          ContentLength: size,
          ChecksumSHA256: checksum,
        }),
        {
          expiresIn: this.expiresInSeconds(),
          // Signed headers, not query parameters: the upload must send exactly these.
          signableHeaders: new Set(['content-length']),
          unhoistableHeaders: new Set(['x-amz-checksum-sha256']),
        },
      ),
    );
    return {
      uploadId,
      url,
      headers: { 'content-length': String(size), 'x-amz-checksum-sha256': checksum },
      expiresAt: new Date(Date.now() + this.expiresInSeconds() * 1000),
    };
  }

  private async finishUpload({
    digest,
    size,
    runId,
    uploadId,
  }: {
    digest: BlobDigest;
    size: number;
    runId: string;
    uploadId: string;
  }): Promise<number> {
    const key = uploadKey(runId, uploadId);
    const head = await this.head(key);
    if (head === null)
      throw new BlobUploadRejectedError(
        'absent',
        `upload ${uploadId}: nothing was uploaded to its URL (or it expired)`,
      );
    try {
      if (head.ContentLength !== size) {
        throw new BlobUploadRejectedError(
          'size',
          `upload ${uploadId}: ${head.ContentLength} bytes arrived, not the ${size} announced; nothing was stored`,
        );
      }
      if (this.settings.verifyChecksums && head.ChecksumSHA256 !== checksumOf(digest)) {
        throw new BlobUploadRejectedError(
          'checksum',
          head.ChecksumSHA256 === undefined
            ? `upload ${uploadId}: the store kept no SHA-256 checksum to verify ${digest} with; nothing was stored (a store that keeps none needs FLUKSIO_S3_VERIFY_CHECKSUMS=false)`
            : `upload ${uploadId}: the store's SHA-256 checksum is not that of ${digest}; nothing was stored`,
        );
      }
      // Server-side: the bytes stay in the store. Over an object already there, which
      // mends one that was damaged (its verified twin replaces it).
      if (this.settings.verifyChecksums) await this.copy(key, blobKey(digest));
      else await this.copyVerified(key, digest, uploadId);
      return size;
    } finally {
      await this.send('DeleteObject', () =>
        this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: key })),
      );
    }
  }

  /** Copies `from` to `to` inside the store, keeping (and having the store check) the SHA-256 when verified. */
  private async copy(from: string, to: string): Promise<void> {
    await this.send('CopyObject', () =>
      this.client.send(
        new CopyObjectCommand({
          Bucket: this.settings.bucket,
          Key: to,
          CopySource: `${this.settings.bucket}/${from}`,
          ...(this.settings.verifyChecksums ? { ChecksumAlgorithm: 'SHA256' as const } : {}),
        }),
      ),
    );
  }

  /**
   * For a store that keeps no checksum, where the size proves nothing (another
   * repository's runner that learnt a digest and its size could send other bytes,
   * overwrite the blob and be granted a ref to it): the upload is copied first to a key no
   * URL names, so a PUT the runner sends again meanwhile changes nothing, and that copy is
   * hashed as it streams through the control plane (the price of such a store) before it
   * becomes the blob. Rejects with BlobUploadRejectedError when its bytes are not `digest`'s.
   */
  private async copyVerified(key: string, digest: BlobDigest, uploadId: string): Promise<void> {
    // Under uploads/, so that gc sweeps one a crash left, as it sweeps unfinished uploads.
    const held = `${key}.verifying`;
    await this.copy(key, held);
    try {
      const object = await this.send('GetObject', () =>
        this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: held })),
      );
      if (!(object.Body instanceof Readable))
        throw new Error(`${this.location} answered ${held} without a body`);
      const hash = createHash('sha256');
      for await (const chunk of object.Body) hash.update(chunk as Buffer);
      const actual = blobDigest(hash.digest('hex'));
      if (actual !== digest)
        throw new BlobUploadRejectedError(
          'checksum',
          `upload ${uploadId}: the bytes uploaded hash to ${actual}, not ${digest}; nothing was stored`,
        );
      await this.copy(held, blobKey(digest));
    } finally {
      await this.send('DeleteObject', () =>
        this.client.send(new DeleteObjectCommand({ Bucket: this.settings.bucket, Key: held })),
      );
    }
  }

  private async head(key: string): Promise<HeadObjectCommandOutput | null> {
    try {
      return await this.client.send(
        new HeadObjectCommand({ Bucket: this.settings.bucket, Key: key, ChecksumMode: 'ENABLED' }),
      );
    } catch (error) {
      if (isNotFound(error)) return null;
      throw new S3StoreError('HeadObject', this.settings, error);
    }
  }

  /** What `request` resolves with; its failure as an S3StoreError naming `operation`. */
  private async send<T>(operation: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw new S3StoreError(operation, this.settings, error);
    }
  }

  private async *list(prefix: string): AsyncGenerator<{ key: string; size: number; modifiedMs: number }> {
    let token: string | undefined;
    do {
      const page = await this.send('ListObjectsV2', () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.settings.bucket,
            Prefix: prefix,
            ...(token === undefined ? {} : { ContinuationToken: token }),
          }),
        ),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield { key: object.Key, size: object.Size ?? 0, modifiedMs: object.LastModified?.getTime() ?? 0 };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  private expiresInSeconds(): number {
    return Math.max(1, Math.round(this.settings.urlTtlMs / 1000));
  }
}

function blobKey(digest: BlobDigest): string {
  // The digest becomes a key: anything but the exact format could name another object.
  if (!BlobDigest.safeParse(digest).success) throw new Error(`"${digest}" is not a blob digest`);
  return `sha256/${digest.slice('sha256:'.length)}`;
}

function uploadKey(runId: string, uploadId: string): string {
  return `uploads/${runId}/${uploadId}`;
}

/** S3's `x-amz-checksum-sha256`: the same SHA-256 as the digest, in base64. */
function checksumOf(digest: BlobDigest): string {
  return Buffer.from(digest.slice('sha256:'.length), 'hex').toString('base64');
}

/** An object that is not there — not a bucket that is not (NoSuchBucket, a setting to fix). */
function isNotFound(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
  return name !== 'NoSuchBucket' && (name === 'NotFound' || name === 'NoSuchKey' || status === 404);
}

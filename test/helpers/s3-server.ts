import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { checksumOf, startS3ChecksumFront, type S3ChecksumFront } from './s3-checksum-front.js';

/** An S3 API server of the test's own (s3rver over a scratch directory) with one empty bucket. */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** What `fluksio app` and `fluksio gc` need to keep blobs there (checksums verified only when the store keeps them). */
  env: Record<string, string>;
  /** Every key in the bucket under `prefix`. */
  keys(prefix?: string): Promise<string[]>;
  /** An object's bytes, or null. */
  read(key: string): Promise<Buffer | null>;
  /** The SHA-256 checksum (base64) the store keeps with an object, or null (none kept, or no such object). */
  checksum(key: string): Promise<string | null>;
  /**
   * Writes an object straight into the store, as someone with the bucket's keys could:
   * with no checksum, or with `{ checksum: true }` its bytes' SHA-256 (which the store verifies, if it keeps any).
   */
  write(key: string, bytes: Buffer | string, options?: { checksum?: boolean }): Promise<void>;
  /**
   * Replaces an object's bytes under the S3 API (in s3rver, behind the checksum front):
   * the checksum the store reports stays the old one, as if the disk under it had rotted.
   * Without checksums, the same as write.
   */
  damage(key: string, bytes: Buffer | string): Promise<void>;
  /** Deletes an object, as someone with the bucket's keys could. */
  remove(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface TestS3Options {
  /**
   * Keep SHA-256 checksums as AWS S3 does (an HTTP front before s3rver, which keeps none:
   * s3-checksum-front.ts), and verify them (`FLUKSIO_S3_VERIFY_CHECKSUMS=true`).
   * @defaultValue false
   */
  checksums?: boolean;
}

const ACCESS_KEY = 'S3RVER';

/** Starts s3rver (and with `checksums`, its checksum front) on free ports of 127.0.0.1 and creates a bucket. */
export async function startTestS3({ checksums = false }: TestS3Options = {}): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'fluksio-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = (await server.run()) as AddressInfo;
  const behind = `http://127.0.0.1:${port}`;
  const front: S3ChecksumFront | null = checksums
    ? await startS3ChecksumFront({ upstream: behind, secrets: { [ACCESS_KEY]: ACCESS_KEY } })
    : null;
  const endpoint = front?.endpoint ?? behind;
  const bucket = `blobs-${randomBytes(4).toString('hex')}`;
  const clientOf = (url: string): S3Client =>
    new S3Client({
      region: 'us-east-1',
      endpoint: url,
      forcePathStyle: true,
      credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: ACCESS_KEY },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  const client = clientOf(endpoint);
  const underneath = front === null ? client : clientOf(behind);
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint,
    bucket,
    env: {
      FLUKSIO_BLOB_STORE: 's3',
      FLUKSIO_S3_BUCKET: bucket,
      FLUKSIO_S3_ENDPOINT: endpoint,
      FLUKSIO_S3_FORCE_PATH_STYLE: 'true',
      FLUKSIO_S3_VERIFY_CHECKSUMS: String(checksums),
      AWS_ACCESS_KEY_ID: ACCESS_KEY,
      AWS_SECRET_ACCESS_KEY: ACCESS_KEY,
    },
    async keys(prefix = '') {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return (listed.Contents ?? []).map((object) => object.Key ?? '');
    },
    async read(key) {
      try {
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        return Buffer.from((await object.Body?.transformToByteArray()) ?? []);
      } catch {
        return null;
      }
    },
    async checksum(key) {
      try {
        const head = await client.send(
          new HeadObjectCommand({ Bucket: bucket, Key: key, ChecksumMode: 'ENABLED' }),
        );
        return head.ChecksumSHA256 ?? null;
      } catch {
        return null;
      }
    },
    async write(key, bytes, { checksum = false } = {}) {
      const summed = checksum ? { ChecksumSHA256: checksumOf(Buffer.from(bytes)) } : {};
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ...summed }));
    },
    async damage(key, bytes) {
      await underneath.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async close() {
      client.destroy();
      underneath.destroy();
      await front?.close();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

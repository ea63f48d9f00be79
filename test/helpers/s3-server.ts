import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** An S3 API server of the test's own (s3rver over a scratch directory) with one empty bucket. */
export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** What `fluksio app` and `fluksio gc` need to keep blobs there (checksums not verified: s3rver keeps none). */
  env: Record<string, string>;
  /** Every key in the bucket under `prefix`. */
  keys(prefix?: string): Promise<string[]>;
  /** An object's bytes, or null. */
  read(key: string): Promise<Buffer | null>;
  /** Writes an object straight into the store, as someone with the bucket's keys could. */
  write(key: string, bytes: Buffer | string): Promise<void>;
  close(): Promise<void>;
}

/** Starts s3rver on a free port of 127.0.0.1 and creates a bucket in it. */
export async function startTestS3(): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'fluksio-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = (await server.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const bucket = `blobs-${randomBytes(4).toString('hex')}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint,
    bucket,
    env: {
      FLUKSIO_BLOB_STORE: 's3',
      FLUKSIO_S3_BUCKET: bucket,
      FLUKSIO_S3_ENDPOINT: endpoint,
      FLUKSIO_S3_FORCE_PATH_STYLE: 'true',
      FLUKSIO_S3_VERIFY_CHECKSUMS: 'false',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
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
    async write(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    },
    async close() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

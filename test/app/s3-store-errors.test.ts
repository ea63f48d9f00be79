import { afterAll, beforeAll, expect, test } from 'vitest';
import { S3Credentials, type S3StorageSettings } from '../../app/blobs/blob-storage-settings.js';
import { S3BlobStorage } from '../../app/blobs/s3-blob-storage.js';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { startTestS3, type TestS3 } from '../helpers/s3-server.js';

/** A secret key that must never show in an error. */
const SECRET = 'wrong-secret-5d81f0c2';
const DIGEST = `sha256:${'ab'.repeat(32)}` as BlobDigest;

let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3.close();
});

function settings(overrides: Partial<S3StorageSettings>): S3StorageSettings {
  return {
    kind: 's3',
    bucket: s3.bucket,
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    urlTtlMs: 60_000,
    verifyChecksums: false,
    credentials: new S3Credentials(s3.env.AWS_ACCESS_KEY_ID ?? '', s3.env.AWS_SECRET_ACCESS_KEY ?? ''),
    ...overrides,
  };
}

/** The message of what `operation` on a store with `overrides` rejects with. */
async function failureOf(
  overrides: Partial<S3StorageSettings>,
  operation: (storage: S3BlobStorage) => Promise<unknown>,
): Promise<string> {
  const storage = new S3BlobStorage(settings(overrides));
  try {
    const error = await operation(storage).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Error);
    return (error as Error).message;
  } finally {
    storage.close();
  }
}

test('a bucket that does not exist is named with its endpoint and FLUKSIO_S3_BUCKET', async () => {
  const message = await failureOf({ bucket: 'no-such-bucket-7e2a' }, (storage) =>
    storage.deleteUnreferenced(new Set(), Date.now()),
  );
  expect(message).toContain('"no-such-bucket-7e2a"');
  expect(message).toContain(s3.endpoint);
  expect(message).toContain('FLUKSIO_S3_BUCKET');
});

test('refused credentials are named by their settings, never by their value', async () => {
  const credentials = new S3Credentials('NOT-A-KEY-ID', SECRET);
  const message = await failureOf({ credentials }, (storage) => storage.openRead(DIGEST));
  expect(message).toContain(`"${s3.bucket}"`);
  expect(message).toContain(s3.endpoint);
  expect(message).toContain('AWS_ACCESS_KEY_ID');
  expect(message).toContain('AWS_SECRET_ACCESS_KEY');
  expect(message).not.toContain(SECRET);
});

test('an endpoint where no store answers is named with FLUKSIO_S3_ENDPOINT', async () => {
  const stopped = await startTestS3();
  await stopped.close();
  const message = await failureOf({ endpoint: stopped.endpoint, bucket: stopped.bucket }, (storage) =>
    storage.deleteUnreferenced(new Set(), Date.now()),
  );
  expect(message).toContain(`"${stopped.bucket}"`);
  expect(message).toContain(stopped.endpoint);
  expect(message).toContain('FLUKSIO_S3_ENDPOINT');
  expect(message).not.toContain(s3.env.AWS_SECRET_ACCESS_KEY ?? '');
});

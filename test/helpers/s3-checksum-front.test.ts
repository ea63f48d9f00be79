import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterEach, expect, test } from 'vitest';
import { presignedSignatureProblem } from './presigned-signature.js';
import { checksumOf } from './s3-checksum-front.js';
import { startTestS3, type TestS3 } from './s3-server.js';

let s3: TestS3 | undefined;
let client: S3Client | undefined;
afterEach(async () => {
  client?.destroy();
  await s3?.close();
  s3 = client = undefined;
});

/** The test S3, and an SDK client of its bucket's owner. */
async function start(checksums: boolean): Promise<{ s3: TestS3; client: S3Client; Bucket: string }> {
  s3 = await startTestS3({ checksums });
  client = new S3Client({
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: {
      accessKeyId: s3.env.AWS_ACCESS_KEY_ID ?? '',
      secretAccessKey: s3.env.AWS_SECRET_ACCESS_KEY ?? '',
    },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return { s3, client, Bucket: s3.bucket };
}

const sum = (text: string): string => checksumOf(Buffer.from(text));

/** A presigned PUT of `Key` that must carry `checksum`, signed as fluksio signs its uploads. */
async function presignedPut(client: S3Client, Bucket: string, Key: string, size: number, checksum: string) {
  return getSignedUrl(
    client,
    new PutObjectCommand({ Bucket, Key, ContentLength: size, ChecksumSHA256: checksum }),
    {
      expiresIn: 60,
      signableHeaders: new Set(['content-length']),
      unhoistableHeaders: new Set(['x-amz-checksum-sha256']),
    },
  );
}

test("the signature check gives the presigned URL of AWS's documentation its signature, and no other", () => {
  const target =
    '/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404';
  const secrets = (id: string) =>
    id === 'AKIAIOSFODNN7EXAMPLE' ? 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' : undefined;
  const request = { method: 'GET', target, headers: { host: 'examplebucket.s3.amazonaws.com' } };
  expect(presignedSignatureProblem(request, secrets)).toBeNull();
  expect(presignedSignatureProblem({ ...request, method: 'PUT' }, secrets)).toContain(
    'not that of this request',
  );
  expect(presignedSignatureProblem({ ...request, headers: { host: 'elsewhere' } }, secrets)).toContain(
    'not that of this request',
  );
  expect(
    presignedSignatureProblem({ ...request, target: target.replace('test.txt', 'other.txt') }, secrets),
  ).toContain('not that of this request');
});

test('a PUT whose x-amz-checksum-sha256 is not its body’s is BadDigest and changes nothing; a matching one is kept and answered when asked for', async () => {
  const { s3, client, Bucket } = await start(true);
  await client.send(new PutObjectCommand({ Bucket, Key: 'k', Body: 'first', ChecksumSHA256: sum('first') }));
  const lie = client.send(
    new PutObjectCommand({ Bucket, Key: 'k', Body: 'other', ChecksumSHA256: sum('first') }),
  );
  await expect(lie).rejects.toMatchObject({ name: 'BadDigest', $metadata: { httpStatusCode: 400 } });
  expect((await s3.read('k'))?.toString()).toBe('first');

  const plain = await client.send(new HeadObjectCommand({ Bucket, Key: 'k' }));
  expect(plain.ChecksumSHA256).toBeUndefined();
  const head = await client.send(new HeadObjectCommand({ Bucket, Key: 'k', ChecksumMode: 'ENABLED' }));
  expect(head).toMatchObject({ ChecksumSHA256: sum('first'), ContentLength: 5 });
  const get = await client.send(new GetObjectCommand({ Bucket, Key: 'k', ChecksumMode: 'ENABLED' }));
  expect(get.ChecksumSHA256).toBe(sum('first'));
  expect(await get.Body?.transformToString()).toBe('first');

  // An overwrite without a checksum keeps none.
  await s3.write('k', 'second');
  expect(await s3.checksum('k')).toBeNull();
});

test('CopyObject keeps the source’s checksum or, asked for SHA256, computes one; DELETE and DeleteObjects forget', async () => {
  const { s3, client, Bucket } = await start(true);
  await client.send(
    new PutObjectCommand({ Bucket, Key: 'summed', Body: 'alpha', ChecksumSHA256: sum('alpha') }),
  );
  await s3.write('bare', 'beta');
  await client.send(new CopyObjectCommand({ Bucket, Key: 'copy-of-summed', CopySource: `${Bucket}/summed` }));
  await client.send(new CopyObjectCommand({ Bucket, Key: 'copy-of-bare', CopySource: `${Bucket}/bare` }));
  await client.send(
    new CopyObjectCommand({
      Bucket,
      Key: 'summed-copy',
      CopySource: `${Bucket}/bare`,
      ChecksumAlgorithm: 'SHA256',
    }),
  );
  expect(await s3.checksum('copy-of-summed')).toBe(sum('alpha'));
  expect(await s3.checksum('copy-of-bare')).toBeNull();
  expect(await s3.checksum('summed-copy')).toBe(sum('beta'));

  await client.send(new DeleteObjectCommand({ Bucket, Key: 'summed' }));
  await client.send(
    new DeleteObjectsCommand({ Bucket, Delete: { Objects: [{ Key: 'copy-of-summed' }], Quiet: true } }),
  );
  expect(await s3.keys()).toEqual(['bare', 'copy-of-bare', 'summed-copy']);
  // The same keys written again behind the front have no checksum: the front forgot theirs.
  for (const key of ['summed', 'copy-of-summed']) {
    await s3.damage(key, 'again');
    expect(await s3.checksum(key)).toBeNull();
  }
});

test('s3rver takes a presigned PUT whatever its signature; the front checks it, with the checksum header it signs', async () => {
  const bare = await start(false);
  const forged = (url: string) =>
    url.replace(/X-Amz-Signature=[0-9a-f]{64}/, `X-Amz-Signature=${'0'.repeat(64)}`);
  const headers = { 'content-length': '5', 'x-amz-checksum-sha256': sum('bytes') };
  const url = await presignedPut(bare.client, bare.Bucket, 'k', 5, sum('bytes'));
  expect(new URL(url).searchParams.get('X-Amz-SignedHeaders')).toBe(
    'content-length;host;x-amz-checksum-sha256',
  );
  expect((await fetch(forged(url), { method: 'PUT', headers, body: 'bytes' })).status).toBe(200);
  client?.destroy();
  await s3?.close();

  const { s3: fronted, client: owner, Bucket } = await start(true);
  const signed = await presignedPut(owner, Bucket, 'k', 5, sum('bytes'));
  const put = (target: string, sent: Record<string, string>, body = 'bytes') =>
    fetch(target, { method: 'PUT', headers: sent, body });
  const refused = await put(forged(signed), headers);
  expect(refused.status).toBe(403);
  expect(await refused.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
  expect((await put(signed, { 'content-length': '5' })).status).toBe(403);
  expect((await put(signed, { ...headers, 'x-amz-checksum-sha256': sum('other') }, 'other')).status).toBe(
    403,
  );
  const lie = await put(signed, headers, 'other');
  expect(lie.status).toBe(400);
  expect(await lie.text()).toContain('<Code>BadDigest</Code>');
  expect(await fronted.keys()).toEqual([]);
  expect((await put(signed, headers)).status).toBe(200);
  expect(await fronted.checksum('k')).toBe(sum('bytes'));
});

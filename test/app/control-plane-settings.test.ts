import { describe, expect, test } from 'vitest';
import { readControlPlaneSettings, readDatabaseSettings } from '../../app/control-plane-settings.js';
import { InvalidSettingsError } from '../../app/invalid-settings-error.js';
import { inspect } from 'node:util';

const REQUIRED = { REDIS_URL: 'redis://127.0.0.1:6379', HOME: '/home/ml' };

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    readControlPlaneSettings(env);
  } catch (error) {
    if (error instanceof InvalidSettingsError) return error.problems;
    throw error;
  }
  throw new Error('the settings were accepted');
}

describe('readControlPlaneSettings', () => {
  test('defaults: PGlite under the data dir, github.com only, no file:// URLs, 90 s leases', () => {
    expect(readControlPlaneSettings(REQUIRED)).toEqual({
      host: '0.0.0.0',
      port: 3000,
      databaseUrl: null,
      dataDir: '/home/ml/.local/share/fluksio',
      redisUrl: 'redis://127.0.0.1:6379',
      queuePrefix: 'fluksio',
      leaseTtlMs: 90_000,
      heartbeatIntervalMs: 20_000,
      sweepIntervalMs: 30_000,
      onlineWindowMs: 120_000,
      queueTimeoutMs: 86_400_000,
      claimRecheckMs: 5_000,
      allowFileUrls: false,
      cloneHosts: ['github.com'],
      metricsToken: null,
      maxBlobBytes: 10 * 2 ** 30,
      maxStageLogBytes: 2 ** 30 + 2 ** 20,
      blobStorage: { kind: 'directory' },
      pagesSecret: null,
      pageLinkTtlMs: 30 * 86_400_000,
      logLevel: 'info',
      github: null,
    });
  });

  test('every variable is read, and an empty one counts as unset', () => {
    const settings = readControlPlaneSettings({
      ...REQUIRED,
      HOST: '127.0.0.1',
      PORT: '8080',
      DATABASE_URL: 'postgres://fluksio@db:5432/fluksio',
      FLUKSIO_DATA_DIR: '/srv/fluksio',
      FLUKSIO_QUEUE_PREFIX: 'staging',
      FLUKSIO_LEASE_TTL: '2m',
      FLUKSIO_HEARTBEAT_INTERVAL: '15s',
      FLUKSIO_SWEEP_INTERVAL: '10s',
      FLUKSIO_ONLINE_WINDOW: '5m',
      FLUKSIO_QUEUE_TIMEOUT: '6h',
      FLUKSIO_CLAIM_RECHECK: '1500ms',
      FLUKSIO_ALLOW_FILE_URLS: 'yes',
      FLUKSIO_CLONE_HOSTS: 'github.com, Git.Example.com:8443',
      FLUKSIO_METRICS_TOKEN: 'scrape',
      FLUKSIO_MAX_BLOB_SIZE: '512MiB',
      FLUKSIO_MAX_STAGE_LOG: '65MiB',
      FLUKSIO_PAGES_SECRET: 's'.repeat(40),
      FLUKSIO_PAGE_LINK_TTL: '7d',
      LOG_LEVEL: '',
    });
    expect(settings).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      databaseUrl: 'postgres://fluksio@db:5432/fluksio',
      dataDir: '/srv/fluksio',
      queuePrefix: 'staging',
      leaseTtlMs: 120_000,
      heartbeatIntervalMs: 15_000,
      sweepIntervalMs: 10_000,
      onlineWindowMs: 300_000,
      queueTimeoutMs: 21_600_000,
      claimRecheckMs: 1_500,
      allowFileUrls: true,
      cloneHosts: ['github.com', 'git.example.com:8443'],
      metricsToken: 'scrape',
      maxBlobBytes: 512 * 2 ** 20,
      maxStageLogBytes: 65 * 2 ** 20,
      pagesSecret: 's'.repeat(40),
      pageLinkTtlMs: 7 * 86_400_000,
      logLevel: 'info',
    });
  });

  test('every problem is named at once, each by its variable', () => {
    expect(
      problemsOf({
        FLUKSIO_LEASE_TTL: 'x',
        PORT: 'http',
        FLUKSIO_ALLOW_FILE_URLS: 'sure',
        FLUKSIO_MAX_BLOB_SIZE: 'huge',
        FLUKSIO_CLONE_HOSTS: 'github.com,bad host',
      }),
    ).toEqual([
      'PORT: "http" is not a port number',
      'REDIS_URL: is required (the control plane keeps its queues in Redis), e.g. redis://127.0.0.1:6379',
      'FLUKSIO_LEASE_TTL: "x" is not a duration (write e.g. 90s, 30m or 6h)',
      'FLUKSIO_ALLOW_FILE_URLS: "sure" is not a yes/no value (write true or false)',
      'FLUKSIO_CLONE_HOSTS: "bad host" is not a host name (write e.g. github.com,git.example.com)',
      'FLUKSIO_MAX_BLOB_SIZE: "huge" is not a size (write e.g. 512MiB, 10GiB or a number of bytes)',
    ]);
  });

  test('a URL with a password is refused without repeating it', () => {
    const problems = problemsOf({ ...REQUIRED, DATABASE_URL: 'mysql://root:hunter2@db/x' });
    expect(problems).toEqual(['DATABASE_URL: expected a postgres:// or postgresql:// URL']);
  });

  test('heartbeats must come more often than leases expire', () => {
    expect(problemsOf({ ...REQUIRED, FLUKSIO_LEASE_TTL: '30s', FLUKSIO_HEARTBEAT_INTERVAL: '30s' })).toEqual([
      'FLUKSIO_HEARTBEAT_INTERVAL: must be shorter than FLUKSIO_LEASE_TTL (30000 ms), or leases expire between two heartbeats',
    ]);
  });

  test('the error message lists every problem', () => {
    expect(() => readControlPlaneSettings({ FLUKSIO_LEASE_TTL: 'x' })).toThrow(
      /REDIS_URL[\s\S]*FLUKSIO_LEASE_TTL/,
    );
  });
});

describe('readDatabaseSettings', () => {
  test('needs no Redis: only where the database is', () => {
    expect(readDatabaseSettings({ XDG_DATA_HOME: '/data' })).toEqual({
      databaseUrl: null,
      dataDir: '/data/fluksio',
    });
    expect(() => readDatabaseSettings({ DATABASE_URL: 'nope' })).toThrow(InvalidSettingsError);
  });
});

describe('the blob store settings', () => {
  const S3 = { ...REQUIRED, FLUKSIO_BLOB_STORE: 's3', FLUKSIO_S3_BUCKET: 'acme-fluksio' };

  test('S3: a bucket, AWS defaults, 15-minute URLs, checksums verified, at most 5 GiB a blob', () => {
    const settings = readControlPlaneSettings(S3);
    expect(settings.blobStorage).toEqual({
      kind: 's3',
      bucket: 'acme-fluksio',
      region: 'us-east-1',
      endpoint: null,
      forcePathStyle: false,
      urlTtlMs: 900_000,
      verifyChecksums: true,
      credentials: null,
    });
    expect(settings.maxBlobBytes).toBe(5 * 2 ** 30);
  });

  test('an S3-compatible store: endpoint, path style, region, TTL, static keys that never print', () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const settings = readControlPlaneSettings({
      ...S3,
      FLUKSIO_S3_ENDPOINT: 'https://minio.internal:9000',
      FLUKSIO_S3_FORCE_PATH_STYLE: 'true',
      FLUKSIO_S3_REGION: 'eu-west-1',
      FLUKSIO_S3_URL_TTL: '5m',
      FLUKSIO_S3_VERIFY_CHECKSUMS: 'false',
      AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
      AWS_SECRET_ACCESS_KEY: secret,
    });
    expect(settings.blobStorage).toMatchObject({
      endpoint: 'https://minio.internal:9000',
      forcePathStyle: true,
      region: 'eu-west-1',
      urlTtlMs: 300_000,
      verifyChecksums: false,
    });
    if (settings.blobStorage.kind !== 's3' || !settings.blobStorage.credentials) throw new Error('no keys');
    expect(settings.blobStorage.credentials.forSdk()).toEqual({
      accessKeyId: 'AKIAEXAMPLE',
      secretAccessKey: secret,
    });
    expect(JSON.stringify(settings)).not.toContain(secret);
    expect(inspect(settings, { depth: 10 })).not.toContain(secret);
  });

  test('every problem is named, none echoing a secret', () => {
    const secret = 'do-not-print-me-0123456789';
    const problems = problemsOf({
      ...REQUIRED,
      FLUKSIO_BLOB_STORE: 's3',
      FLUKSIO_MAX_BLOB_SIZE: '6GiB',
      AWS_SECRET_ACCESS_KEY: secret,
    });
    expect(problems).toEqual([
      'FLUKSIO_S3_BUCKET: is required with FLUKSIO_BLOB_STORE=s3 (the bucket blobs are kept in)',
      "AWS_ACCESS_KEY_ID: is required with AWS_SECRET_ACCESS_KEY (or set neither, for the SDK's default credentials)",
      'FLUKSIO_MAX_BLOB_SIZE: 6442450944 bytes is more than one presigned S3 upload takes (5GiB); write at most 5GiB',
    ]);
    expect(problems.join('\n')).not.toContain(secret);
    expect(problemsOf({ ...S3, FLUKSIO_S3_URL_TTL: '30d' })).toEqual([
      'FLUKSIO_S3_URL_TTL: must be between 1s and 7d (the longest a presigned URL lasts)',
    ]);
    expect(problemsOf({ ...REQUIRED, FLUKSIO_BLOB_STORE: 'gcs' })).toEqual([
      'FLUKSIO_BLOB_STORE: "gcs" is not a blob store (one of directory, s3)',
    ]);
    expect(problemsOf({ ...REQUIRED, FLUKSIO_S3_BUCKET: 'acme' })).toEqual([
      'FLUKSIO_S3_BUCKET: is set but FLUKSIO_BLOB_STORE is not "s3"; set FLUKSIO_BLOB_STORE=s3 to use it',
    ]);
  });
});

import { inspect } from 'node:util';

/** Where the control plane keeps blobs (`FLUKSIO_BLOB_STORE`). */
export type BlobStorageSettings = DirectoryStorageSettings | S3StorageSettings;

/** Blobs in `<FLUKSIO_DATA_DIR>/blobs`: a local disk or a shared filesystem. */
export interface DirectoryStorageSettings {
  kind: 'directory';
}

/** Blobs in an S3 bucket (or an S3-compatible store); runners and `fluksio pull` move bytes with presigned URLs. */
export interface S3StorageSettings {
  kind: 's3';
  /** The bucket (`FLUKSIO_S3_BUCKET`), which must exist. */
  bucket: string;
  /**
   * The bucket's region (`FLUKSIO_S3_REGION`, else `AWS_REGION`).
   * @defaultValue 'us-east-1'
   */
  region: string;
  /**
   * Another S3 API than AWS's (`FLUKSIO_S3_ENDPOINT`), e.g. MinIO's `https://minio.internal:9000`.
   * @defaultValue null
   */
  endpoint: string | null;
  /**
   * Address the bucket in the path (`FLUKSIO_S3_FORCE_PATH_STYLE`), as most S3-compatible stores need.
   * @defaultValue false
   */
  forcePathStyle: boolean;
  /**
   * How long a presigned URL stays valid (`FLUKSIO_S3_URL_TTL`): a transfer must start
   * within it. Every URL is handed out after the usual authorization, for one blob.
   * @defaultValue 900_000 (15 min)
   */
  urlTtlMs: number;
  /**
   * Whether an upload is recorded only when the store confirms its SHA-256 checksum
   * (`FLUKSIO_S3_VERIFY_CHECKSUMS`). AWS S3 verifies the `x-amz-checksum-sha256` each
   * presigned upload must carry and keeps it; a store that keeps none (s3rver, older
   * S3-compatible servers) needs `false`, and then the control plane reads each upload
   * back and hashes it itself before recording it. Downloads are verified by digest either way.
   * @defaultValue true
   */
  verifyChecksums: boolean;
  /**
   * Static credentials (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`);
   * null uses the AWS SDK's default chain (an instance or task role, a profile).
   * @defaultValue null
   */
  credentials: S3Credentials | null;
}

/**
 * An S3 access key. The secret never prints: JSON and `util.inspect` (pino, console,
 * error reports) show it redacted.
 */
export class S3Credentials {
  readonly #secretAccessKey: string;
  readonly #sessionToken: string | undefined;

  constructor(
    readonly accessKeyId: string,
    secretAccessKey: string,
    sessionToken?: string,
  ) {
    this.#secretAccessKey = secretAccessKey;
    this.#sessionToken = sessionToken;
  }

  /** What the AWS SDK is given. */
  forSdk(): { accessKeyId: string; secretAccessKey: string; sessionToken?: string } {
    return {
      accessKeyId: this.accessKeyId,
      secretAccessKey: this.#secretAccessKey,
      ...(this.#sessionToken === undefined ? {} : { sessionToken: this.#sessionToken }),
    };
  }

  toJSON(): Record<string, string> {
    return { accessKeyId: this.accessKeyId, secretAccessKey: '[redacted]' };
  }

  [inspect.custom](): string {
    return `S3Credentials { accessKeyId: '${this.accessKeyId}', secretAccessKey: [redacted] }`;
  }
}

/** The largest object one presigned PUT may create: S3's limit for a single upload. */
export const S3_MAX_SINGLE_UPLOAD = 5 * 2 ** 30;

/** The environment variables the blob storage is configured from, parsed (control-plane-settings.ts). */
export interface BlobStorageVariables {
  FLUKSIO_BLOB_STORE: 'directory' | 's3';
  FLUKSIO_S3_BUCKET?: string | undefined;
  FLUKSIO_S3_REGION?: string | undefined;
  AWS_REGION?: string | undefined;
  FLUKSIO_S3_ENDPOINT?: string | undefined;
  FLUKSIO_S3_FORCE_PATH_STYLE: boolean;
  FLUKSIO_S3_URL_TTL: number;
  FLUKSIO_S3_VERIFY_CHECKSUMS: boolean;
  AWS_ACCESS_KEY_ID?: string | undefined;
  AWS_SECRET_ACCESS_KEY?: string | undefined;
  AWS_SESSION_TOKEN?: string | undefined;
}

/**
 * The blob storage's settings; problems (a missing bucket, half a key pair) are pushed
 * onto `problems`, each naming its variable and never echoing a secret.
 */
export function readBlobStorageSettings(vars: BlobStorageVariables, problems: string[]): BlobStorageSettings {
  if (vars.FLUKSIO_BLOB_STORE === 'directory') {
    const stray = (['FLUKSIO_S3_BUCKET', 'FLUKSIO_S3_ENDPOINT'] as const).filter((name) => vars[name]);
    for (const name of stray)
      problems.push(
        `${name}: is set but FLUKSIO_BLOB_STORE is not "s3"; set FLUKSIO_BLOB_STORE=s3 to use it`,
      );
    return { kind: 'directory' };
  }
  if (vars.FLUKSIO_S3_BUCKET === undefined)
    problems.push('FLUKSIO_S3_BUCKET: is required with FLUKSIO_BLOB_STORE=s3 (the bucket blobs are kept in)');
  const { AWS_ACCESS_KEY_ID: keyId, AWS_SECRET_ACCESS_KEY: secret } = vars;
  if ((keyId === undefined) !== (secret === undefined)) {
    problems.push(
      `${keyId === undefined ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY'}: is required with ${keyId === undefined ? 'AWS_SECRET_ACCESS_KEY' : 'AWS_ACCESS_KEY_ID'} (or set neither, for the SDK's default credentials)`,
    );
  }
  return {
    kind: 's3',
    bucket: vars.FLUKSIO_S3_BUCKET ?? '',
    region: vars.FLUKSIO_S3_REGION ?? vars.AWS_REGION ?? 'us-east-1',
    endpoint: vars.FLUKSIO_S3_ENDPOINT ?? null,
    forcePathStyle: vars.FLUKSIO_S3_FORCE_PATH_STYLE,
    urlTtlMs: vars.FLUKSIO_S3_URL_TTL,
    verifyChecksums: vars.FLUKSIO_S3_VERIFY_CHECKSUMS,
    credentials:
      keyId !== undefined && secret !== undefined
        ? new S3Credentials(keyId, secret, vars.AWS_SESSION_TOKEN)
        : null,
  };
}

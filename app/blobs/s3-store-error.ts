import { messageOf } from '../../core/text/message-of.js';
import type { S3StorageSettings } from './blob-storage-settings.js';

/**
 * An S3 request of the blob store that failed: the sentence names the operation, the
 * bucket, the endpoint, what went wrong and which setting to look at — never a credential
 * (the SDK's error, kept as `cause`, carries none either).
 */
export class S3StoreError extends Error {
  constructor(
    readonly operation: string,
    settings: Pick<S3StorageSettings, 'bucket' | 'endpoint' | 'region'>,
    cause: unknown,
  ) {
    const endpoint = settings.endpoint ?? `AWS S3 in ${settings.region} (FLUKSIO_S3_ENDPOINT is not set)`;
    super(
      `S3 ${operation} on bucket "${settings.bucket}" at ${endpoint} failed: ${reasonOf(cause)}; ${hintFor(cause, settings.endpoint !== null)}`,
      { cause },
    );
    this.name = 'S3StoreError';
  }
}

/** What the SDK said, with the HTTP status when there was an answer. */
function reasonOf(error: unknown): string {
  const { name, code, status } = detailsOf(error);
  const said = messageOf(error);
  // An answer without a body (any HEAD) leaves the SDK nothing to say but its status.
  if (status !== undefined && (said === '' || said === 'UnknownError')) return `HTTP ${status}`;
  const message = said || code || name || 'no message';
  return status === undefined ? message : `${message} (HTTP ${status})`;
}

/** Which setting most likely needs fixing, by the kind of failure. */
function hintFor(error: unknown, customEndpoint: boolean): string {
  const { name, code, status } = detailsOf(error);
  if (name === 'NoSuchBucket' || (name === 'NotFound' && status === 404))
    return 'the bucket does not exist there: check FLUKSIO_S3_BUCKET (and FLUKSIO_S3_ENDPOINT, FLUKSIO_S3_REGION)';
  if (
    name === 'InvalidAccessKeyId' ||
    name === 'SignatureDoesNotMatch' ||
    name === 'AccessDenied' ||
    name === 'Forbidden' ||
    name === 'CredentialsProviderError' ||
    name === 'ExpiredToken' ||
    name === 'InvalidToken' ||
    status === 401 ||
    status === 403
  )
    return 'the credentials were refused or lack access to the bucket: check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN (or, without them, the SDK’s default credentials) and the bucket’s policy';
  if (name === 'PermanentRedirect' || name === 'AuthorizationHeaderMalformed' || status === 301)
    return 'the bucket is in another region: check FLUKSIO_S3_REGION';
  if (status === undefined)
    return customEndpoint
      ? 'no answer from the store: check FLUKSIO_S3_ENDPOINT (and that the store is up and reachable)'
      : 'no answer from AWS S3: check FLUKSIO_S3_REGION, FLUKSIO_S3_ENDPOINT and the network';
  return `check FLUKSIO_S3_BUCKET, FLUKSIO_S3_ENDPOINT, FLUKSIO_S3_REGION and the credentials${code ? ` (${code})` : ''}`;
}

function detailsOf(error: unknown): { name?: string; code?: string; status?: number } {
  const record = (error ?? {}) as {
    name?: unknown;
    code?: unknown;
    Code?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  const status = record.$metadata?.httpStatusCode;
  const code = typeof record.code === 'string' ? record.code : record.Code;
  return {
    ...(typeof record.name === 'string' ? { name: record.name } : {}),
    ...(typeof code === 'string' ? { code } : {}),
    ...(typeof status === 'number' ? { status } : {}),
  };
}

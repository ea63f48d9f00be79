import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** A request made with a presigned URL, as it reached the server. */
export interface PresignedRequest {
  method: string;
  /** The request target as sent: the path and its query, still encoded. */
  target: string;
  headers: IncomingHttpHeaders;
}

/**
 * Why a presigned request's signature (AWS Signature Version 4 in the query string) is
 * not one the holder of `secretFor(accessKeyId)` made for exactly this request, or null
 * when it is. What S3 recomputes: the method, the path, every query parameter but the
 * signature, and the value of each header in `X-Amz-SignedHeaders`, so a header the
 * signer named that is sent with another value, or not at all, fails. The payload is
 * `UNSIGNED-PAYLOAD` unless the query says otherwise; expiry is left to the server.
 */
export function presignedSignatureProblem(
  request: PresignedRequest,
  secretFor: (accessKeyId: string) => string | undefined,
): string | null {
  const [rawPath = '/', rawQuery = ''] = request.target.split(/\?(.*)/s);
  const query = parseQuery(rawQuery);
  const param = (name: string): string | undefined => query.find(([key]) => key === name)?.[1];
  const credential = param('X-Amz-Credential')?.split('/');
  const date = param('X-Amz-Date');
  const signedHeaders = param('X-Amz-SignedHeaders');
  const signature = param('X-Amz-Signature');
  if (param('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' || !credential || !date || !signedHeaders || !signature)
    return 'the query lacks the parameters of a Signature Version 4 presigned URL';
  if (credential.length !== 5) return `X-Amz-Credential "${credential.join('/')}" is malformed`;
  const [accessKeyId = '', day = '', region = '', service = '', terminator = ''] = credential;
  const secret = secretFor(accessKeyId);
  if (secret === undefined) return `no secret is known for access key ${accessKeyId}`;

  const names = signedHeaders.split(';');
  const canonicalRequest = [
    request.method,
    rawPath
      .split('/')
      .map((segment) => uriEncode(decodeURIComponent(segment)))
      .join('/'),
    query
      .filter(([key]) => key !== 'X-Amz-Signature')
      .map(([key, value]) => [uriEncode(key), uriEncode(value)])
      .sort(([a = '', x = ''], [b = '', y = '']) => (a === b ? compare(x, y) : compare(a, b)))
      .map(([key, value]) => `${key}=${value}`)
      .join('&'),
    names.map((name) => `${name}:${headerValue(request.headers, name)}\n`).join(''),
    signedHeaders,
    param('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD',
  ].join('\n');
  const scope = `${day}/${region}/${service}/${terminator}`;
  const stringToSign = ['AWS4-HMAC-SHA256', date, scope, sha256Hex(canonicalRequest)].join('\n');
  let key = hmac(`AWS4${secret}`, day);
  for (const part of [region, service, terminator]) key = hmac(key, part);
  const expected = Buffer.from(hmac(key, stringToSign).toString('hex'));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given)
    ? null
    : `the signature is not that of this request (signed headers: ${signedHeaders})`;
}

/** The query's parameters in order, decoded as AWS encodes them (`%20`, never `+`, for a space). */
function parseQuery(raw: string): [string, string][] {
  if (raw === '') return [];
  return raw.split('&').map((pair) => {
    const [key = '', value = ''] = pair.split(/=(.*)/s);
    return [decodeURIComponent(key), decodeURIComponent(value)];
  });
}

/** A header's value as SigV4 canonicalizes it: repeated values joined by commas, trimmed, inner spaces squeezed. */
function headerValue(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return joined.trim().replace(/ +/g, ' ');
}

/** RFC 3986 unreserved characters stay; everything else, `/` included, is percent-encoded. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** Byte order, as SigV4 sorts the query (not the locale's). */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

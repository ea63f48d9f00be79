import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { presignedSignatureProblem } from './presigned-signature.js';

/** An HTTP front before an S3 API server, adding S3's SHA-256 checksums (see startS3ChecksumFront). */
export interface S3ChecksumFront {
  /** e.g. `http://127.0.0.1:41234`: the S3 endpoint clients use. */
  endpoint: string;
  close(): Promise<void>;
}

export interface S3ChecksumFrontOptions {
  /** The S3 API server behind, e.g. s3rver's `http://127.0.0.1:41233`. Path-style requests only. */
  upstream: string;
  /** The secret of each access key, to check presigned URLs' signatures with. */
  secrets: Readonly<Record<string, string>>;
}

/** Headers of one hop only, or describing a body the front re-sends whole. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'expect', 'content-length']);

/**
 * S3's flexible checksums, SHA-256 only, in front of an S3 API server that keeps none
 * (s3rver; jamhall/s3rver#801), as AWS documents them in "Checking object integrity":
 * a PUT carrying `x-amz-checksum-sha256` whose body hashes to something else is
 * answered `400 BadDigest` and stores nothing, else the checksum is kept with the
 * object; HEAD and GET with `x-amz-checksum-mode: ENABLED` answer it; CopyObject copies
 * the source's, or computes one with `x-amz-checksum-algorithm: SHA256`; a PUT without
 * one, a DELETE or a DeleteObjects forgets it. It also checks the signature of presigned
 * URLs (403 SignatureDoesNotMatch), which s3rver 3 does not (it checks only the access
 * key and the expiry of Signature Version 4 requests). Every request is forwarded with
 * its Host header, path and query as sent. Bodies are held in memory: objects of a
 * test's size.
 */
export async function startS3ChecksumFront(options: S3ChecksumFrontOptions): Promise<S3ChecksumFront> {
  const upstream = new URL(options.upstream);
  /** `<bucket>/<key>` → the object's SHA-256, base64. */
  const checksums = new Map<string, string>();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const s3 = await readS3Request(request);
    if (s3.url.searchParams.has('X-Amz-Signature')) {
      const problem = presignedSignatureProblem(
        { method: s3.method, target: s3.target, headers: s3.headers },
        (id) => options.secrets[id],
      );
      if (problem !== null)
        return sendError(
          response,
          403,
          'SignatureDoesNotMatch',
          `The request signature we calculated does not match the signature you provided: ${problem}.`,
        );
    }
    if (s3.amz('x-amz-trailer') !== undefined)
      return sendError(
        response,
        501,
        'NotImplemented',
        'This test S3 takes checksums in headers, not trailers.',
      );
    const { method, object } = s3;
    if (method === 'PUT' && object !== null && s3.amz('x-amz-copy-source') !== undefined)
      return copyObject(s3, object, response);
    if (method === 'PUT' && object !== null) return putObject(s3, object, response);
    if (method === 'DELETE' && object !== null) {
      const answer = await forward(s3);
      if (isSuccess(answer)) checksums.delete(object);
      return relay(answer, response);
    }
    if (method === 'POST' && object === null && s3.url.searchParams.has('delete')) {
      const answer = await forward(s3);
      if (isSuccess(answer)) for (const key of deletedKeys(s3.body)) checksums.delete(`${s3.bucket}/${key}`);
      return relay(answer, response);
    }
    const answer = await forward(s3);
    const kept = object === null ? undefined : checksums.get(object);
    const asked = (method === 'GET' || method === 'HEAD') && s3.amz('x-amz-checksum-mode') === 'ENABLED';
    if (asked && answer.statusCode === 200 && kept !== undefined)
      return relay(answer, response, { 'x-amz-checksum-sha256': kept, 'x-amz-checksum-type': 'FULL_OBJECT' });
    return relay(answer, response);
  }

  /** PutObject: stored only if the body hashes to the checksum it announces; the checksum kept with it. */
  async function putObject(s3: S3Request, object: string, response: ServerResponse): Promise<void> {
    const announced = s3.amz('x-amz-checksum-sha256');
    if (announced !== undefined && Buffer.from(announced, 'base64').length !== 32)
      return sendError(response, 400, 'InvalidRequest', 'Value for x-amz-checksum-sha256 header is invalid.');
    if (announced !== undefined && checksumOf(s3.body) !== announced)
      return sendError(
        response,
        400,
        'BadDigest',
        'The SHA256 you specified did not match the calculated checksum.',
      );
    const answer = await forward(s3);
    if (isSuccess(answer)) remember(object, announced);
    return relay(answer, response);
  }

  /** CopyObject: the source's checksum comes along, or one is computed when asked for. */
  async function copyObject(s3: S3Request, object: string, response: ServerResponse): Promise<void> {
    const source = decodeURIComponent(s3.amz('x-amz-copy-source')?.split('?')[0] ?? '').replace(/^\//, '');
    const algorithm = s3.amz('x-amz-checksum-algorithm');
    if (algorithm !== undefined && algorithm !== 'SHA256')
      return sendError(
        response,
        400,
        'InvalidRequest',
        `This test S3 computes SHA256 checksums only, not ${algorithm}.`,
      );
    const answer = await forward(s3);
    if (isSuccess(answer))
      remember(
        object,
        algorithm === 'SHA256' ? checksumOf(await readUpstream(source)) : checksums.get(source),
      );
    return relay(answer, response);
  }

  function remember(object: string, checksum: string | undefined): void {
    if (checksum === undefined) checksums.delete(object);
    else checksums.set(object, checksum);
  }

  /** The request, as sent, to the server behind; its answer, body unread. */
  async function forward(s3: S3Request): Promise<IncomingMessage> {
    const headers: IncomingHttpHeaders = { 'content-length': String(s3.body.length) };
    for (const [name, value] of Object.entries(s3.headers))
      if (!NOT_FORWARDED.has(name)) headers[name] = value;
    const outgoing = httpRequest({
      host: upstream.hostname,
      port: upstream.port,
      method: s3.method,
      path: s3.target,
      headers,
    });
    outgoing.end(s3.body);
    const [answer] = (await once(outgoing, 'response')) as [IncomingMessage];
    return answer;
  }

  /** An object's bytes, read from the server behind without signing (s3rver lets anyone read). */
  async function readUpstream(object: string): Promise<Buffer> {
    const path = `/${object.split('/').map(encodeURIComponent).join('/')}`;
    const answer = await fetch(new URL(path, upstream));
    if (!answer.ok) throw new Error(`${path}: the S3 server behind answered ${answer.status}`);
    return Buffer.from(await answer.arrayBuffer());
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!response.headersSent) sendError(response, 500, 'InternalError', message);
      else response.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** S3's `x-amz-checksum-sha256` of some bytes: their SHA-256, base64. */
export function checksumOf(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('base64');
}

/** A request to the front, read whole. */
interface S3Request {
  method: string;
  /** The path and query as sent. */
  target: string;
  url: URL;
  headers: IncomingHttpHeaders;
  bucket: string;
  /** `<bucket>/<key>`, or null for a request to the bucket itself. */
  object: string | null;
  body: Buffer;
  /** An `x-amz-*` value, from the query (where a presigned URL may carry it, and S3 reads it too) or a header. */
  amz(name: string): string | undefined;
}

async function readS3Request(request: IncomingMessage): Promise<S3Request> {
  const target = request.url ?? '/';
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const url = new URL(target, 'http://front');
  const [bucket = '', ...keyParts] = url.pathname.slice(1).split('/').map(decodeURIComponent);
  const key = keyParts.join('/');
  return {
    method: request.method ?? 'GET',
    target,
    url,
    headers: request.headers,
    bucket,
    // `/<bucket>/` (CreateBucket, ListObjectsV2, DeleteObjects) names no object.
    object: key === '' ? null : `${bucket}/${key}`,
    body: Buffer.concat(chunks),
    amz(name) {
      const value = url.searchParams.get(name) ?? request.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    },
  };
}

function isSuccess(answer: IncomingMessage): boolean {
  const status = answer.statusCode ?? 0;
  return status >= 200 && status < 300;
}

/** The answer of the server behind, with `extra` headers. */
function relay(answer: IncomingMessage, response: ServerResponse, extra: Record<string, string> = {}): void {
  const headers: IncomingHttpHeaders = { ...extra };
  for (const [name, value] of Object.entries(answer.headers))
    if (name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding') headers[name] = value;
  response.writeHead(answer.statusCode ?? 502, headers);
  answer.pipe(response);
}

/** S3's error document. */
function sendError(response: ServerResponse, status: number, code: string, message: string): void {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message></Error>`;
  response.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) });
  response.end(xml);
}

/** The keys a DeleteObjects request names. */
function deletedKeys(body: Buffer): string[] {
  return [...body.toString('utf8').matchAll(/<Key>([^<]*)<\/Key>/g)].map((match) =>
    unescapeXml(match[1] ?? ''),
  );
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function unescapeXml(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

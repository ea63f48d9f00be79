import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * Passes a request on to `target` as it came, every header included (Host too: an S3
 * signature covers it), and its answer back as it came.
 */
export function forwardRequest(target: URL, request: IncomingMessage, response: ServerResponse): void {
  const forwarded = httpRequest(
    {
      host: target.hostname,
      port: target.port,
      method: request.method,
      path: request.url,
      headers: request.headers,
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  request.pipe(forwarded);
}

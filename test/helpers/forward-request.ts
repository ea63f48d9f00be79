import {
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';

/**
 * Passes a request on to `target` as it came, every header included (Host too: an S3
 * signature covers it), and its answer back as it came — or with the headers
 * `answerHeaders` makes of them.
 */
export function forwardRequest(
  target: URL,
  request: IncomingMessage,
  response: ServerResponse,
  answerHeaders: (headers: IncomingHttpHeaders) => IncomingHttpHeaders = (headers) => headers,
): void {
  const forwarded = httpRequest(
    {
      host: target.hostname,
      port: target.port,
      method: request.method,
      path: request.url,
      headers: request.headers,
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answerHeaders(answer.headers));
      answer.pipe(response);
    },
  );
  request.pipe(forwarded);
}

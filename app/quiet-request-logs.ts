import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/** Query parameters that open pages (a signed link's signature, the local UI's secret, a sign-in's code and state). */
const SECRET_PARAMS = ['sig', 'token', 'code', 'state'];

/** `url` with the value of every secret query parameter replaced, so a log line opens nothing. */
export function loggableUrl(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = new URLSearchParams(url.slice(at + 1));
  for (const name of SECRET_PARAMS) if (query.has(name)) query.set(name, '[redacted]');
  return `${url.slice(0, at)}?${query.toString()}`;
}

/**
 * Fastify's per-request lines at `debug` instead of `info`: runners heartbeat every 20 s
 * and long-poll claims, so a line per request would drown what matters. Errors are still
 * logged as Fastify logs them (its default error handler is untouched).
 */
export class QuietRequestLogs extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ method: request.method, url: loggableUrl(request.url) }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) {
      reply.log.error(
        { err: error, statusCode: reply.statusCode, url: loggableUrl(request.url) },
        'request errored',
      );
    } else {
      reply.log.debug({ statusCode: reply.statusCode, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}

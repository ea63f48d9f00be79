import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * Fastify's per-request lines at `debug` instead of `info`: runners heartbeat every 20 s
 * and long-poll claims, so a line per request would drown what matters. Errors are still
 * logged as Fastify logs them (its default error handler is untouched).
 */
export class QuietRequestLogs extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ method: request.method, url: request.url }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) {
      reply.log.error({ err: error, statusCode: reply.statusCode, url: request.url }, 'request errored');
    } else {
      reply.log.debug({ statusCode: reply.statusCode, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}

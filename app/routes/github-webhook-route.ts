import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';

/** Probot's Node middleware: answers a request for its path and resolves true, else false. */
export type WebhookMiddleware = (
  request: IncomingMessage,
  response: ServerResponse,
  next?: (error?: Error) => void,
) => boolean | void | Promise<boolean | void>;

/** Where GitHub delivers webhooks (DESIGN §6). */
export const WEBHOOK_PATH = '/api/github/webhooks';

/**
 * Mounts Probot's middleware at `POST /api/github/webhooks` (DESIGN §6, §8): the body is
 * left unread by fastify, since the signature is over the exact bytes GitHub sent, and the
 * middleware answers on the raw response — 4xx for a wrong signature (nothing stored), 200
 * once the delivery is stored and enqueued.
 */
export function githubWebhookRoute(app: FastifyInstance, middleware: WebhookMiddleware): void {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    scope.post(WEBHOOK_PATH, async (request, reply) => {
      reply.hijack();
      await middleware(request.raw, reply.raw, () => {
        reply.raw.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"No such endpoint"}');
      });
    });
  });
}

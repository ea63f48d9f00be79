import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BodyBudget } from '../http/body-budget.js';
import { HttpError } from '../http/http-error.js';

/** Probot's Node middleware: answers a request for its path and resolves true, else false. */
export type WebhookMiddleware = (
  request: IncomingMessage,
  response: ServerResponse,
  next?: (error?: Error) => void,
) => boolean | void | Promise<boolean | void>;

/** Where GitHub delivers webhooks (DESIGN §6). */
export const WEBHOOK_PATH = '/api/github/webhooks';

/** GitHub caps a webhook payload at 25 MB and does not deliver larger ones. */
export const WEBHOOK_BODY_LIMIT = 25 * 2 ** 20;

/**
 * Unverified webhook bytes held at once, across deliveries: one payload of GitHub's
 * largest. Real deliveries are kilobytes, so many fit beside each other.
 */
const WEBHOOK_BUDGET_BYTES = WEBHOOK_BODY_LIMIT;

/**
 * The most a delivery without a Content-Length may hold. GitHub declares the length of
 * every delivery; a proxy that streams one instead still passes any ordinary payload.
 */
const UNLENGTHED_WEBHOOK_BYTES = 2 ** 20;

/** GitHub waits 10 s for an answer: a body still arriving after that is no delivery of its. */
const WEBHOOK_BODY_DEADLINE_MS = 10_000;

/** The headers every GitHub delivery carries; the signature is `sha256=` and 64 hex digits. */
const SIGNATURE = /^sha256=[0-9a-f]{64}$/;

/**
 * Mounts Probot's middleware at `POST /api/github/webhooks` (DESIGN §6, §8). Before a byte
 * of the body is read, a request without GitHub's headers and a signature is refused (400),
 * and one whose Content-Length is over GitHub's 25 MB cap answered 413; the body is then
 * read as text (the signature is over the exact bytes GitHub sent), within that cap and the
 * budget shared by every delivery in flight (body-budget.ts), and handed to the middleware,
 * which verifies the signature and answers on the raw response — 4xx for a wrong signature
 * (nothing stored), 200 once the delivery is stored and enqueued.
 */
export function githubWebhookRoute(app: FastifyInstance, middleware: WebhookMiddleware): void {
  const budget = new BodyBudget({
    bytes: WEBHOOK_BUDGET_BYTES,
    unlengthedBytes: UNLENGTHED_WEBHOOK_BYTES,
    deadlineMs: WEBHOOK_BODY_DEADLINE_MS,
  });
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    scope.post(
      WEBHOOK_PATH,
      { bodyLimit: WEBHOOK_BODY_LIMIT, onRequest: refuseUnsigned, preParsing: budget.preParsing },
      async (request, reply) => {
        reply.hijack();
        // Probot's middleware takes a body already read from `request.body` when it is text.
        Object.assign(request.raw, { body: request.body });
        await middleware(request.raw, reply.raw, () => {
          reply.raw
            .writeHead(404, { 'content-type': 'application/json' })
            .end('{"error":"No such endpoint"}');
        });
      },
    );
  });
}

async function refuseUnsigned(request: FastifyRequest): Promise<void> {
  for (const name of ['X-GitHub-Event', 'X-GitHub-Delivery']) {
    if (typeof request.headers[name.toLowerCase()] !== 'string') {
      throw new HttpError(400, `${name}: is required (GitHub sends it with every delivery)`, name);
    }
  }
  const signature = request.headers['x-hub-signature-256'];
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) {
    throw new HttpError(
      400,
      'X-Hub-Signature-256: expected "sha256=" and 64 hex digits, the signature GitHub sends',
      'X-Hub-Signature-256',
    );
  }
}

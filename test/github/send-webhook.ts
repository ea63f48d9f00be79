import { performance } from 'node:perf_hooks';
import { sign } from '@octokit/webhooks-methods';

/** How to deliver a webhook. */
export interface SendWebhookOptions {
  /** Sign with a different secret, as a forged delivery would be. @defaultValue `false` */
  badSignature?: boolean;
  /** The body to send instead of the payload's JSON (a truncated or malformed delivery); it is signed as sent. */
  rawBody?: string;
}

/** What the webhook endpoint answered, and how long it took. */
export interface WebhookResponse {
  status: number;
  /** The answer's text. */
  body: string;
  /** Milliseconds from sending to the end of the answer. */
  ms: number;
}

/**
 * POSTs a delivery over real HTTP as GitHub does: `X-GitHub-Event`, `X-GitHub-Delivery`,
 * `X-Hub-Signature-256` (HMAC-SHA256 of the exact body with `secret`), JSON content type.
 */
export async function sendWebhook(
  url: string,
  delivery: { name: string; payload: unknown; id: string },
  secret: string,
  options: SendWebhookOptions = {},
): Promise<WebhookResponse> {
  const body = options.rawBody ?? JSON.stringify(delivery.payload);
  const signature = await sign(options.badSignature ? `${secret}-wrong` : secret, body);
  const started = performance.now();
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/fluksio-test',
      'x-github-event': delivery.name,
      'x-github-delivery': delivery.id,
      'x-github-hook-id': '1',
      'x-hub-signature-256': signature,
    },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: text, ms: performance.now() - started };
}

import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A load balancer in front of one control plane, whose backend dies at a chosen request. */
export interface DyingFront {
  url: string;
  /** Requests `trigger` matched so far, the one that killed the control plane included. */
  triggered(): number;
  /** Whether a request since the kill carried `text` in its body. */
  sentSinceKill(text: string): boolean;
  close(): Promise<void>;
}

/**
 * A few lines of node:http passing requests on to the control plane at `target()` (read
 * at each request: it is started again on the same port), as a load balancer would. The
 * first request `trigger` matches calls `kill` (SIGKILL the control plane, or nothing: a
 * backend that failed that one request) and is answered 502; so is every request while
 * the control plane is down, as a balancer with no backend answers.
 */
export async function startDyingFront(
  target: () => string,
  trigger: (method: string, url: string) => boolean,
  kill: () => Promise<unknown>,
): Promise<DyingFront> {
  let matched = 0;
  const sinceKill: string[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      void (async () => {
        if (matched > 0) sinceKill.push(Buffer.concat(chunks).toString());
        if (trigger(incoming.method ?? '', incoming.url ?? '')) {
          matched += 1;
          if (matched === 1) {
            await kill();
            outgoing.writeHead(502).end('the control plane died');
            return;
          }
        }
        const proxied = httpRequest(new URL(incoming.url ?? '/', target()), {
          method: incoming.method,
          headers: incoming.headers,
        });
        proxied.on('response', (answer: IncomingMessage) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        });
        proxied.on('error', (error) => {
          if (!outgoing.headersSent) outgoing.writeHead(502).end(`no control plane: ${error.message}`);
          else outgoing.destroy();
        });
        proxied.end(Buffer.concat(chunks));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    triggered: () => matched,
    sentSinceKill: (text) => sinceKill.some((body) => body.includes(text)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a request was, for counting where each kind went. */
export type RequestKind = 'webhook' | 'claim' | 'events' | 'other';

/** A load balancer in front of control plane processes, as a test sees it. */
export interface RoundRobinBalancer {
  url: string;
  /** Requests each backend answered, by kind. */
  served(backend: string): Record<RequestKind, number>;
  close(): Promise<void>;
}

/**
 * A few lines of node:http doing what a load balancer in front of `fluksio app` replicas
 * does: each request to the next backend in turn; a backend that refuses the connection
 * (killed) is skipped from then on and the request goes to the next; a backend that dies
 * with the request in flight answers 502, which clients retry.
 */
export async function startRoundRobinBalancer(backends: string[]): Promise<RoundRobinBalancer> {
  const alive = new Set(backends);
  const counts = new Map(backends.map((backend) => [backend, { webhook: 0, claim: 0, events: 0, other: 0 }]));
  let turn = 0;
  const nextBackend = (): string | undefined => {
    for (let tried = 0; tried < backends.length; tried += 1) {
      const backend = backends[turn++ % backends.length] as string;
      if (alive.has(backend)) return backend;
    }
    return undefined;
  };

  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = (): void => {
        const backend = nextBackend();
        if (backend === undefined) {
          outgoing.writeHead(503).end('no backend alive');
          return;
        }
        const proxied = httpRequest(new URL(incoming.url ?? '/', backend), {
          method: incoming.method,
          headers: { ...incoming.headers, host: new URL(backend).host },
        });
        proxied.on('response', (answer: IncomingMessage) => {
          const served = counts.get(backend);
          if (served) served[kindOf(incoming.url ?? '')] += 1;
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
          answer.on('error', () => outgoing.destroy());
        });
        proxied.on('error', (error: NodeJS.ErrnoException) => {
          if (error.code === 'ECONNREFUSED') {
            alive.delete(backend);
            forward();
          } else if (!outgoing.headersSent) {
            outgoing.writeHead(502).end(`backend ${backend} failed: ${error.message}`);
          } else {
            outgoing.destroy();
          }
        });
        proxied.end(body);
      };
      forward();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served: (backend) => ({ ...(counts.get(backend) ?? { webhook: 0, claim: 0, events: 0, other: 0 }) }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function kindOf(url: string): RequestKind {
  if (url.startsWith('/api/github/webhooks')) return 'webhook';
  if (url.startsWith('/api/v1/runner/claim')) return 'claim';
  return /^\/api\/v1\/runs\/[^/]+\/events/.test(url) ? 'events' : 'other';
}

import { createServer } from 'node:http';

/** A relay in front of a control plane, and the switch that takes it down. */
export interface ControlPlaneRelay {
  /** Where the action is told the control plane is. */
  url: string;
  /** False: every request is answered 503, as by a load balancer whose control plane is gone. */
  up: boolean;
  close(): Promise<void>;
}

/**
 * An HTTP relay to the control plane at `upstream` that a test can take down and bring
 * back: an outage as the action sees it, while the control plane and its runs go on (so
 * what the outage left behind can be read from it afterwards).
 */
export async function startControlPlaneRelay(upstream: string): Promise<ControlPlaneRelay> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (!relay.up) {
        response.writeHead(503, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: 'The control plane is unavailable' }));
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(
          (entry): entry is [string, string] =>
            typeof entry[1] === 'string' && !['host', 'connection', 'content-length'].includes(entry[0]),
        ),
      );
      fetch(`${upstream}${request.url ?? '/'}`, {
        method: request.method ?? 'GET',
        headers,
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
      })
        .then(async (answer) => {
          response.writeHead(answer.status, {
            'content-type': answer.headers.get('content-type') ?? 'application/json',
          });
          response.end(Buffer.from(await answer.arrayBuffer()));
        })
        .catch((error: unknown) => {
          response.writeHead(502, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: String(error) }));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const relay: ControlPlaneRelay = {
    url: `http://127.0.0.1:${port}`,
    up: true,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return relay;
}

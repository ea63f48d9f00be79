import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardRequest } from '../helpers/forward-request.js';

/** A front started by startEventHoldingFront. */
export interface EventHoldingFront {
  server: Server;
  url: string;
}

/**
 * A load balancer in front of the control plane at `target` that answers 503 to the
 * runner's event uploads while `holding.events` is set (a replica that cannot take them),
 * and passes everything else on: heartbeats keep the lease, blobs are stored.
 */
export async function startEventHoldingFront(
  target: string,
  holding: { events: boolean },
): Promise<EventHoldingFront> {
  const server = createServer((request, response) => {
    if (holding.events && request.method === 'POST' && /\/events$/.test(request.url ?? '')) {
      request.resume();
      response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"held"}');
      return;
    }
    forwardRequest(new URL(target), request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

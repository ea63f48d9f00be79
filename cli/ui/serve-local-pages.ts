import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { QuietRequestLogs } from '../../app/quiet-request-logs.js';
import { localSecretGate } from '../../app/pages/local-secret-gate.js';
import { readPageAssets } from '../../app/pages/page-assets.js';
import { pageRoutes } from '../../app/pages/page-routes.js';
import type { PageSource } from '../../app/pages/page-source.js';

/** The local UI, listening. */
export interface LocalPages {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** The one-time secret every page's URL must carry (`?token=`). */
  secret: string;
  /** A page's address with the secret: `pageUrl('/runs/01J…')`. */
  pageUrl(path: string): string;
  close(): Promise<void>;
}

/**
 * Serves the run pages of `source` on 127.0.0.1 only, behind a secret made for this
 * process (as Jupyter does): other users of the machine reach the port too.
 */
export async function serveLocalPages({
  source,
  port = 0,
  logger,
}: {
  source: PageSource;
  port?: number;
  /** Where what goes wrong is told (an output found corrupt while downloading). @defaultValue nowhere */
  logger?: Logger;
}): Promise<LocalPages> {
  const secret = randomBytes(24).toString('hex');
  // Per-request lines stay at debug, and a request's URL is logged without its secret.
  const app: FastifyInstance = logger
    ? Fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new QuietRequestLogs() })
    : Fastify({ logger: false });
  pageRoutes(app, { source, gate: localSecretGate(secret), assets: () => readPageAssets() });
  await app.listen({ host: '127.0.0.1', port });
  const address = app.server.address();
  const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}`;
  return {
    origin,
    secret,
    pageUrl: (path) => `${origin}${path}${path.includes('?') ? '&' : '?'}token=${secret}`,
    close: async () => {
      await app.close();
    },
  };
}

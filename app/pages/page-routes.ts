import type { FastifyInstance } from 'fastify';
import { pageAdmission } from './page-admission.js';
import { pageApiRoutes } from './page-api-routes.js';
import type { PageAssets } from './page-assets.js';
import { pageChartRoutes } from './page-chart-routes.js';
import type { PageGate } from './page-gate.js';
import { pageShellRoutes } from './page-shell-routes.js';
import type { PageSource } from './page-source.js';
import { pollingRunChanges } from './polling-run-changes.js';
import type { RunChanges } from './run-changes.js';

/** What the pages are served from, who may see them, and the bundle to serve. */
export interface PageRoutesOptions {
  source: PageSource;
  gate: PageGate;
  /** Read once, on the first request for an asset. */
  assets: () => Promise<PageAssets>;
  /**
   * What tells a live page's streams that a run changed (a control plane's RunBell).
   * @defaultValue pollingRunChanges(livePollMs): a look every livePollMs
   */
  changes?: RunChanges;
  /**
   * The longest a live stream waits before it looks again without being told: with
   * `changes`, a lost ring costs this much; without, every change does. @defaultValue 1000 with `changes`, else 100
   */
  livePollMs?: number;
}

/**
 * The run pages (issue 11), served alike by `fluksio app` and `fluksio ui`: the HTML shells
 * of the run page (`/runs/:id`), a sweep's (`/groups/:id`) and a comparison
 * (`/compare?runs=a,b`) (page-shell-routes.ts); the `/pages/api/…` JSON the bundle draws
 * them from, with a stage's log as server-sent events (page-api-routes.ts); and the chart a
 * check run embeds (page-chart-routes.ts). Every page and every answer first asks `gate`
 * about the run's repository; a run the caller may not see answers as one that does not exist.
 */
export function pageRoutes(app: FastifyInstance, options: PageRoutesOptions): void {
  const { source, gate } = options;
  const admitted = pageAdmission(gate);
  // Live logs end when the server closes, or close() would wait for every open page.
  const closing = new AbortController();
  app.addHook('preClose', async () => closing.abort());
  pageShellRoutes(app, { source, gate, admitted, assets: options.assets });
  pageApiRoutes(app, {
    source,
    admitted,
    changes: options.changes ?? pollingRunChanges(options.livePollMs ?? 100),
    pollMs: options.livePollMs ?? (options.changes ? 1000 : 100),
    signal: closing.signal,
  });
  pageChartRoutes(app, { source, admitted });
}

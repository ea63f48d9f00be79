import { pino } from 'pino';
import { listRuns } from '../../store/runs/list-runs.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { openProjectStore, requireRun } from '../../local/open-project-store.js';
import { localPageSource } from '../ui/local-page-source.js';
import { openBrowser } from '../ui/open-browser.js';
import { serveLocalPages } from '../ui/serve-local-pages.js';
import { UsageError } from '../../present/terminal/usage-error.js';

export interface UiCommandOptions {
  pipeline?: string;
  port?: string;
  /** Print the address without opening a browser. */
  open?: boolean;
  json?: boolean;
}

/**
 * `fluksio ui [RUN]` (and `fluksio show RUN --web`): serves this project's run pages from
 * its store on 127.0.0.1, prints the address of RUN's page (the newest run's by default;
 * a sweep member's sweep page too) with its one-time secret, opens it, and runs until
 * interrupted. `--json` prints `{ url, sweepUrl }` on one line.
 */
export async function uiCommand(
  idOrPrefix: string | undefined,
  options: UiCommandOptions,
  io: CliIo,
): Promise<number> {
  const port = options.port === undefined ? 0 : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port: "${options.port}" is not a port number (0 picks a free one)`);
  const store = await openProjectStore(options.pipeline, io);
  try {
    const run =
      idOrPrefix === undefined
        ? (await listRuns({ db: store.state.db, limit: 1 }))[0]
        : await requireRun(store, idOrPrefix);
    if (!run)
      throw new UsageError(`No runs yet for ${store.project.displayPath}: start one with "fluksio run"`);
    const pages = await serveLocalPages({
      source: localPageSource(store),
      port,
      logger: pino({ level: 'warn' }, io.stderr),
    });
    try {
      const url = pages.pageUrl(`/runs/${run.id}`);
      const sweepUrl = run.groupId ? pages.pageUrl(`/groups/${run.groupId}`) : null;
      if (options.json) io.stdout.write(`${JSON.stringify({ url, sweepUrl })}\n`);
      else {
        io.stdout.write(`Run ${run.id}: ${url}\n`);
        if (sweepUrl) io.stdout.write(`Its sweep: ${sweepUrl}\n`);
        io.stdout.write('Serving on 127.0.0.1 only, until interrupted (Ctrl-C).\n');
      }
      if (options.open !== false) await openBrowser(url, io.env);
      await new Promise<void>((resolve) => {
        if (!io.signal || io.signal.aborted) return resolve();
        io.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      await pages.close();
    }
    return 0;
  } finally {
    await store.state.close();
  }
}

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseInput } from '../http/parse-input.js';
import type { PageAdmission } from './page-admission.js';
import type { PageAssets } from './page-assets.js';
import type { PageGate } from './page-gate.js';
import { CompareQuery, IdParams } from './page-params.js';
import { pageShell } from './page-shell.js';
import type { PageSource } from './page-source.js';
import { RunListQuery } from './run-list-query.js';

/** What the HTML pages need: where runs are, who may see them, and the bundle that draws them. */
export interface PageShellRoutesOptions {
  source: PageSource;
  gate: PageGate;
  admitted: PageAdmission;
  /** Read once, on the first request for an asset. */
  assets: () => Promise<PageAssets>;
}

/**
 * The run pages' HTML: the run page (`/runs/:id`), a sweep's (`/groups/:id`), a comparison
 * (`/compare?runs=a,b`) and a repository's runs (`/runs`), each a shell the bundle
 * (`/pages/assets/…`) draws from the JSON of page-api-routes.ts.
 */
export function pageShellRoutes(app: FastifyInstance, options: PageShellRoutesOptions): void {
  const { source, gate, admitted } = options;
  let assets: Promise<PageAssets> | null = null;
  const loadAssets = (): Promise<PageAssets> => {
    assets ??= options.assets().catch((error: unknown) => {
      assets = null;
      throw error;
    });
    return assets;
  };

  app.get('/pages/assets/pages.js', async (_request, reply) =>
    reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send((await loadAssets()).js),
  );
  app.get('/pages/assets/pages.css', async (_request, reply) =>
    reply
      .type('text/css; charset=utf-8')
      .header('cache-control', 'no-cache')
      .send((await loadAssets()).css),
  );

  /** A page's HTML shell (its data comes from /pages/api), once the viewer may see `repositories`. */
  async function sendShell(
    request: FastifyRequest,
    reply: FastifyReply,
    repositories: readonly (string | null)[],
    what: string,
    page: Omit<Parameters<typeof pageShell>[0], 'viewer'>,
  ): Promise<FastifyReply> {
    if (!(await admitted(request, reply, repositories, what, true))) return reply;
    return reply
      .type('text/html; charset=utf-8')
      .send(pageShell({ viewer: await gate.viewer?.(request), ...page }));
  }

  app.get('/runs/:id', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    const repository = await source.repositoryOfRun(id);
    return sendShell(request, reply, [repository], `run ${id}`, {
      kind: 'run',
      subject: id,
      title: `Run ${id}`,
    });
  });
  app.get('/groups/:id', async (request, reply) => {
    const { id } = parseInput(IdParams, request.params, 'id');
    const repository = await source.repositoryOfGroup(id);
    return sendShell(request, reply, [repository], `sweep ${id}`, {
      kind: 'sweep',
      subject: id,
      title: `Sweep ${id}`,
    });
  });
  app.get('/compare', async (request, reply) => {
    const { runs } = parseInput(CompareQuery, request.query, 'runs');
    const repositories = await Promise.all(runs.map((id) => source.repositoryOfRun(id)));
    return sendShell(request, reply, repositories, 'such run', {
      kind: 'compare',
      subject: runs.join(','),
      title: `Compare ${runs.length} runs`,
    });
  });

  // A repository's runs, or a pull request's (`?pr=`), newest first, filtered, a page at a time.
  app.get('/runs', async (request, reply) => {
    const query = parseInput(RunListQuery, request.query, 'query');
    const repository = query.repo ?? source.defaultRepository;
    const title = `Runs of ${repository}${query.pr === undefined ? '' : ` #${query.pr}`}`;
    return sendShell(request, reply, [repository], `repository ${query.repo ?? ''}`, {
      kind: 'runs',
      subject: repository ?? '',
      title,
    });
  });
}

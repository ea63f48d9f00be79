import { RUN_LIST_MAX, type RunListItem } from '../../schemas/protocol/run-list.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { originRepositoryHere } from './origin-repository-here.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';

/** The control plane's runs as `fluksio runs` tabulates them, with where they came from. */
export interface RemoteRunList {
  /** The repository named by `origin` here; null outside one (every repository the token reaches). */
  repository: string | null;
  url: string;
  /** Newest first. */
  runs: (Omit<RunListItem, 'createdAt'> & { createdAt: Date })[];
}

/**
 * `fluksio runs --remote`: the control plane's newest `limit` runs of this repository
 * (named by its `origin`, as submit names it), or of every repository the token reaches
 * when run outside a repository with an origin. At most RUN_LIST_MAX at once.
 */
export async function listRemoteRuns(
  options: { limit: number; url: string | undefined },
  io: CliIo,
): Promise<RemoteRunList> {
  if (options.limit > RUN_LIST_MAX)
    throw new UsageError(`--limit: at most ${RUN_LIST_MAX} runs of the control plane at once`);
  const connection = serverConnection(options.url, io.env);
  const client = submitterClient(connection);
  const repository = (await originRepositoryHere(io.cwd))?.repository ?? null;
  const runs = await client.listRuns({
    limit: options.limit,
    ...(repository === null ? {} : { repository }),
  });
  return {
    repository,
    url: connection.url,
    runs: runs.map((run) => ({ ...run, createdAt: new Date(run.createdAt) })),
  };
}

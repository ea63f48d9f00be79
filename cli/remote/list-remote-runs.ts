import { simpleGit } from 'simple-git';
import { RUN_LIST_MAX, type RunListItem } from '../../schemas/protocol/run-list.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { originRepository } from '../../client/origin-repository.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';

/** The control plane's runs as `fluksio runs` tabulates them, with where they came from. */
export interface RemoteRunList {
  /** The repository named by `origin` here; null outside one (every repository the token reaches). */
  repository: string | null;
  url: string;
  /** Newest first; control-plane runs are never dirty. */
  runs: (Omit<RunListItem, 'createdAt'> & { createdAt: Date; dirty: false })[];
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
  const repository = await originRepositoryName(io.cwd);
  const runs = await client.listRuns({
    limit: options.limit,
    ...(repository === null ? {} : { repository }),
  });
  return {
    repository,
    url: connection.url,
    runs: runs.map((run) => ({ ...run, createdAt: new Date(run.createdAt), dirty: false })),
  };
}

/** The control plane's name of the repository here, from its `origin`; null without one. */
async function originRepositoryName(cwd: string): Promise<string | null> {
  const git = simpleGit({ baseDir: cwd });
  const root = await git.revparse(['--show-toplevel']).catch(() => null);
  if (root === null) return null;
  const url = (await git.remote(['get-url', 'origin']).catch(() => '')) || '';
  if (!url.trim()) return null;
  return originRepository(url.trim(), root.trim()).repository;
}

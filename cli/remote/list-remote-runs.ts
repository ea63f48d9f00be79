import { RUN_LIST_MAX, type RunListItem } from '../../schemas/protocol/run-list.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { locateProject } from '../../local/locate-project.js';
import { originRepositoryHere } from './origin-repository-here.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';

/** The control plane's runs as `fluksio runs` tabulates them, with where they came from. */
export interface RemoteRunList {
  /** The repository named by `origin` here; null outside one (every repository the token reaches). */
  repository: string | null;
  /** The pipeline file whose runs these are (its path in the repository); null for every one. */
  pipelinePath: string | null;
  url: string;
  /** Newest first. */
  runs: (Omit<RunListItem, 'createdAt'> & { createdAt: Date })[];
}

/**
 * `fluksio runs --remote`: the control plane's newest `limit` runs of this repository
 * (named by its `origin`, as submit names it) and of the pipeline looked at (`--pipeline`,
 * else the one here), as local `fluksio runs` lists one pipeline's runs; of each pipeline
 * of the repository where there is none here, and of every repository the token reaches
 * when run outside a repository with an origin. At most RUN_LIST_MAX at once.
 */
export async function listRemoteRuns(
  options: { limit: number; url: string | undefined; pipeline: string | undefined },
  io: CliIo,
): Promise<RemoteRunList> {
  if (options.limit > RUN_LIST_MAX)
    throw new UsageError(`--limit: at most ${RUN_LIST_MAX} runs of the control plane at once`);
  const connection = serverConnection(options.url, io.env);
  const client = submitterClient(connection);
  const repository = (await originRepositoryHere(io.cwd))?.repository ?? null;
  // A pipeline named with --pipeline must exist; without it, none here lists them all.
  const pipelinePath =
    repository === null
      ? null
      : await locateProject(options.pipeline, io.cwd).then(
          (project) => project.pipelinePath,
          (error: unknown) => {
            if (options.pipeline !== undefined) throw error;
            return null;
          },
        );
  const runs = await client.listRuns({
    limit: options.limit,
    ...(repository === null ? {} : { repository }),
    ...(pipelinePath === null ? {} : { pipelinePath }),
  });
  return {
    repository,
    pipelinePath,
    url: connection.url,
    runs: runs.map((run) => ({ ...run, createdAt: new Date(run.createdAt) })),
  };
}

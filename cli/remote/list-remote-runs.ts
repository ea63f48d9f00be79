import { simpleGit } from 'simple-git';
import { RUN_LIST_MAX } from '../../schemas/protocol/run-list.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { outputWidth } from '../render/output-width.js';
import { renderRunsTable } from '../render/runs-table.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { originRepository } from '../../client/origin-repository.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';

/**
 * `fluksio runs --remote`: the control plane's newest runs of this repository (named by
 * its `origin`, as submit names it), or of every repository the token reaches when run
 * outside a repository with an origin.
 */
export async function listRemoteRuns(
  options: { limit: number; json: boolean; url: string | undefined },
  io: CliIo,
): Promise<number> {
  if (options.limit > RUN_LIST_MAX)
    throw new UsageError(`--limit: at most ${RUN_LIST_MAX} runs of the control plane at once`);
  const connection = serverConnection(options.url, io.env);
  const client = submitterClient(connection);
  const repository = await originRepositoryName(io.cwd);
  const runs = await client.listRuns({
    limit: options.limit,
    ...(repository === null ? {} : { repository }),
  });
  if (options.json) {
    io.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    return 0;
  }
  if (repository !== null) io.stdout.write(`Runs of ${repository} on ${connection.url}\n`);
  io.stdout.write(
    renderRunsTable(
      runs.map((run) => ({ ...run, createdAt: new Date(run.createdAt) })),
      outputWidth(io.stdout, io.env),
    ),
  );
  return 0;
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

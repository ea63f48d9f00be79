import { listRuns } from '../../store/list-runs.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { openProjectStore } from '../../local/open-project-store.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { outputWidth } from '../render/output-width.js';
import { renderRunsTable } from '../render/runs-table.js';

export interface RunsCommandOptions {
  limit: string;
  json?: boolean;
  pipeline?: string;
  /** `--remote`: the control plane's runs of this repository (FLUKSIO_URL). */
  remote?: boolean;
  /** `--url`: the control plane's runs at this URL. */
  url?: string;
}

/** `fluksio runs`: this pipeline's runs, newest first; with --remote, the control plane's. */
export async function runsCommand(options: RunsCommandOptions, io: CliIo): Promise<number> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(`--limit: "${options.limit}" is not a whole number ≥ 1`);
  if (options.remote || options.url !== undefined) {
    const { listRemoteRuns } = await import('../remote/list-remote-runs.js');
    return listRemoteRuns({ limit, json: Boolean(options.json), url: options.url }, io);
  }
  const store = await openProjectStore(options.pipeline, io);
  try {
    const runs = await listRuns({ db: store.state.db, pipelinePath: store.project.pipelinePath, limit });
    if (options.json) io.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    else io.stdout.write(renderRunsTable(runs, outputWidth(io.stdout, io.env)));
    return 0;
  } finally {
    await store.state.close();
  }
}

import Table from 'cli-table3';
import { listRuns } from '../../store/runs/list-runs.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { openProjectStore } from '../../local/open-project-store.js';
import { formatDuration, formatParams, short } from '../../core/text/format.js';
import { UsageError } from '../../present/terminal/usage-error.js';

export interface RunsCommandOptions {
  limit: string;
  json?: boolean;
  pipeline?: string;
}

/** `fluksio runs`: this pipeline's runs, newest first. */
export async function runsCommand(options: RunsCommandOptions, io: CliIo): Promise<number> {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(`--limit: "${options.limit}" is not a whole number ≥ 1`);
  const store = await openProjectStore(options.pipeline, io);
  try {
    const runs = await listRuns({ db: store.state.db, pipelinePath: store.project.pipelinePath, limit });
    if (options.json) {
      io.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
      return 0;
    }
    const table = new Table({
      head: ['run', 'status', 'commit', 'params', 'started', 'time'],
      style: { head: [] },
    });
    for (const run of runs) {
      table.push([
        run.id,
        run.status,
        `${short(run.commit, 10)}${run.dirty ? '*' : ''}`,
        formatParams(run.params),
        run.createdAt.toISOString().replace('T', ' ').slice(0, 19),
        formatDuration(run.durationMs),
      ]);
    }
    io.stdout.write(
      `${table.toString()}\n${runs.some((run) => run.dirty) ? '* dirty: uncommitted changes\n' : ''}`,
    );
    return 0;
  } finally {
    await store.state.close();
  }
}

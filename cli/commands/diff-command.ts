import { diffMetrics } from '../../schemas/metric-diff.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { baselineOf, openProjectStore, requireRun } from '../../local/open-project-store.js';
import { short } from '../../schemas/format.js';
import { outputWidth } from '../render/output-width.js';
import { renderMetricDiffTable } from '../render/metric-diff-table.js';

export interface DiffCommandOptions {
  json?: boolean;
  pipeline?: string;
  /** `--remote`: runs of the control plane at FLUKSIO_URL. */
  remote?: boolean;
  /** `--url`: runs of the control plane at this URL. */
  url?: string;
}

/** `fluksio diff RUN [OTHER]`: a run's metrics against another run's, or its baseline's. */
export async function diffCommand(
  idOrPrefix: string,
  otherIdOrPrefix: string | undefined,
  options: DiffCommandOptions,
  io: CliIo,
): Promise<number> {
  if (options.remote || options.url !== undefined) {
    const { diffRemoteRuns } = await import('../remote/diff-remote-runs.js');
    return diffRemoteRuns(idOrPrefix, otherIdOrPrefix, options, io);
  }
  const store = await openProjectStore(options.pipeline, io);
  try {
    const run = await requireRun(store, idOrPrefix);
    const other = otherIdOrPrefix ? await requireRun(store, otherIdOrPrefix) : await baselineOf(store, run);
    const diff = diffMetrics(run.metrics, other?.metrics ?? null, store.goals);
    if (options.json) {
      const ref = (each: typeof run | null) =>
        each ? { id: each.id, commit: each.commit, params: each.params } : null;
      io.stdout.write(`${JSON.stringify({ run: ref(run), against: ref(other), diff }, null, 2)}\n`);
      return 0;
    }
    io.stdout.write(
      other
        ? `${short(run.id, 10)} against ${short(other.id, 10)}${otherIdOrPrefix ? '' : ' (its baseline)'}\n`
        : `${short(run.id, 10)} has no baseline: no earlier successful run on its commit or their ancestors\n`,
    );
    io.stdout.write(`${renderMetricDiffTable(diff, outputWidth(io.stdout, io.env))}\n`);
    return 0;
  } finally {
    await store.state.close();
  }
}

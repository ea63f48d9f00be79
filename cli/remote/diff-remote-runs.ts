import { diffMetrics } from '../../schemas/metric-diff.js';
import { short } from '../../core/text/format.js';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { localGoals } from './local-goals.js';
import { outputWidth } from '../render/output-width.js';
import { renderMetricDiffTable } from '../render/metric-diff-table.js';
import { resolveRemoteRun } from './resolve-remote-run.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';

/**
 * `fluksio diff RUN [OTHER] --remote`: two runs of the control plane compared as
 * `fluksio diff` compares local ones; without OTHER, against the baseline the control
 * plane fixed for RUN. Better and worse follow the goals of the pipeline file here, when
 * there is one.
 */
export async function diffRemoteRuns(
  idOrPrefix: string,
  otherIdOrPrefix: string | undefined,
  options: { json?: boolean; pipeline?: string; url?: string },
  io: CliIo,
): Promise<number> {
  const client = submitterClient(serverConnection(options.url, io.env));
  const reportOf = async (id: string) => client.run(id);
  const run = await reportOf(await resolveRemoteRun(client, idOrPrefix));
  const otherId = otherIdOrPrefix ? await resolveRemoteRun(client, otherIdOrPrefix) : run.baseline?.id;
  const other = otherId === undefined ? null : await reportOf(otherId);
  const diff = diffMetrics(run.metrics, other?.metrics ?? null, await localGoals(options.pipeline, io.cwd));
  if (options.json) {
    const ref = (each: RemoteRunReport | null) =>
      each ? { id: each.run.id, commit: each.run.commit, params: each.run.params } : null;
    io.stdout.write(`${JSON.stringify({ run: ref(run), against: ref(other), diff }, null, 2)}\n`);
    return 0;
  }
  io.stdout.write(
    other
      ? `${short(run.run.id, 10)} against ${short(other.run.id, 10)}${otherIdOrPrefix ? '' : ' (its baseline)'}\n`
      : `${short(run.run.id, 10)} has no baseline on the control plane\n`,
  );
  io.stdout.write(`${renderMetricDiffTable(diff, outputWidth(io.stdout, io.env))}\n`);
  return 0;
}

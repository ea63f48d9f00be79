import { diffParams } from '../../core/experiments/diff-params.js';
import { diffMetrics } from '../../schemas/metric-diff.js';
import type { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { localGoals } from './local-goals.js';
import { outputWidth } from '../render/output-width.js';
import { renderRunDiffMarkdown } from '../render/run-diff-markdown.js';
import { renderRunDiffText } from '../render/run-diff-text.js';
import { describeSide, type RunDiffView } from '../render/run-diff-view.js';
import { resolveRemoteRun } from './resolve-remote-run.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';

/**
 * `fluksio diff RUN [OTHER] --remote`: two runs of the control plane compared as
 * `fluksio diff` compares local ones (params and metrics, only what changed unless
 * `all`); without OTHER, against the baseline the control plane fixed for RUN. Better and
 * worse follow the goals of the pipeline file here, when there is one.
 */
export async function diffRemoteRuns(
  idOrPrefix: string,
  otherIdOrPrefix: string | undefined,
  options: { json?: boolean; md?: boolean; all?: boolean; pipeline?: string; url?: string },
  io: CliIo,
): Promise<number> {
  const client = submitterClient(serverConnection(options.url, io.env));
  const reportOf = async (id: string) => client.run(id);
  const run = await reportOf(await resolveRemoteRun(client, idOrPrefix));
  const otherId = otherIdOrPrefix ? await resolveRemoteRun(client, otherIdOrPrefix) : run.baseline?.id;
  const other = otherId === undefined ? null : await reportOf(otherId);
  const view: RunDiffView = {
    title: other
      ? `Run ${describeSide(run.run, null)} against run ${describeSide(other.run, otherIdOrPrefix ? null : 'its baseline')}`
      : `Run ${describeSide(run.run, null)} has no baseline on the control plane`,
    notes: [],
    compared: other !== null,
    params: diffParams(run.run.params, other?.run.params ?? null),
    metrics: diffMetrics(run.metrics, other?.metrics ?? null, await localGoals(options.pipeline, io.cwd)),
    all: Boolean(options.all),
  };
  if (options.json) {
    const ref = (each: RemoteRunReport | null) =>
      each
        ? { id: each.run.id, commit: each.run.commit, dirty: each.run.dirty, params: each.run.params }
        : null;
    io.stdout.write(
      `${JSON.stringify({ run: ref(run), against: ref(other), params: view.params, diff: view.metrics }, null, 2)}\n`,
    );
  } else if (options.md) io.stdout.write(renderRunDiffMarkdown(view));
  else io.stdout.write(renderRunDiffText(view, outputWidth(io.stdout, io.env)));
  return 0;
}

import pc from 'picocolors';
import { buildRunReport } from '../../schemas/run-report.js';
import { tracebackTexts } from '../../core/traceback.js';
import { getRunDetail } from '../../store/runs/get-run-detail.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { baselineOf, openProjectStore, requireRun } from '../../local/open-project-store.js';
import { renderRunSummary } from '../../present/terminal/run-summary.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';
import { showRemoteRun } from '../remote/show-remote-run.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { terminalText } from '../../present/terminal/terminal-text.js';

export interface ShowCommandOptions {
  json?: boolean;
  log?: string;
  pipeline?: string;
  /** A run of the control plane at this URL, not of the local store. */
  url?: string;
  /** A run of the control plane at FLUKSIO_URL. */
  remote?: boolean;
}

/**
 * `fluksio show RUN`: the summary `fluksio run` printed, or a stage's whole log; of the
 * local store, or with `--url`/`--remote` of the control plane. With `--json`, the report
 * or (`--log`) `{run, stage, status, log}`: only JSON, so it pipes into jq.
 */
export async function showCommand(
  idOrPrefix: string,
  options: ShowCommandOptions,
  io: CliIo,
): Promise<number> {
  if (options.url !== undefined || options.remote) {
    const connection = serverConnection(options.url, io.env);
    return showRemoteRun(submitterClient(connection), idOrPrefix, options, io);
  }
  const store = await openProjectStore(options.pipeline, io);
  try {
    const run = await requireRun(store, idOrPrefix);
    const detail = await getRunDetail({ db: store.state.db, runId: run.id });
    if (!detail) throw new UsageError(`Run ${run.id} has no record`);
    if (options.log !== undefined) {
      const stage = detail.stages.find((each) => each.name === options.log);
      if (!stage) {
        throw new UsageError(
          `--log: run ${run.id} has no stage "${options.log}" (it has: ${detail.stages.map((s) => s.name).join(', ')})`,
        );
      }
      if (!stage.logDigest)
        throw new UsageError(
          `Stage ${stage.name} of run ${run.id} has no stored log (status: ${stage.status})`,
        );
      const log = (await store.state.blobs.getBytes(stage.logDigest)).toString('utf8');
      io.stdout.write(
        options.json
          ? `${JSON.stringify({ run: run.id, stage: stage.name, status: stage.status, log }, null, 2)}\n`
          : terminalText(log),
      );
      return 0;
    }
    const report = buildRunReport(detail, await baselineOf(store, run), store.goals);
    if (options.json) {
      // The report, and the series the summary draws sparklines from (plot files' too).
      io.stdout.write(`${JSON.stringify({ ...report, series: detail.series }, null, 2)}\n`);
      return 0;
    }
    const tracebacks = detail.stages.flatMap((stage) =>
      tracebackTexts(stage.logTail.split('\n')).map((text) => ({ stage: stage.name, text })),
    );
    const colors = pc.createColors(Boolean(io.stdout.isTTY) && !io.env.NO_COLOR);
    io.stdout.write(
      renderRunSummary({ report, series: detail.series, stages: detail.stages, tracebacks }, colors),
    );
    return 0;
  } finally {
    await store.state.close();
  }
}

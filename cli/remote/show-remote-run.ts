import pc from 'picocolors';
import { tracebackTexts } from '../../core/traceback.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { renderRunSummary } from '../../present/terminal/run-summary.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import { terminalText } from '../../present/terminal/terminal-text.js';
import { resolveRemoteRun } from './resolve-remote-run.js';

/** How much of a failed stage's log the summary shows, as `fluksio run` keeps it. */
const TAIL_LINES = 40;

/**
 * `fluksio show RUN --url URL`: a run of the control plane (a GitHub run, a submitted one)
 * shown as `fluksio show` shows a local run — the summary with the failed stages' log
 * tails and tracebacks, `--json` its report with its series, `--log STAGE` that stage’s whole log (with `--json`:
 * `{run, stage, status, log}`).
 */
export async function showRemoteRun(
  client: ControlPlaneClient,
  runId: string,
  options: { json?: boolean; log?: string },
  io: CliIo,
): Promise<number> {
  const report = await client.run(await resolveRemoteRun(client, runId));
  if (options.log !== undefined) {
    const stage = report.stages.find((each) => each.name === options.log);
    if (!stage) {
      throw new UsageError(
        `--log: run ${report.run.id} has no stage "${options.log}" (it has: ${report.stages.map((each) => each.name).join(', ')})`,
      );
    }
    const lines = await client.stageLog(report.run.id, stage.name);
    io.stdout.write(
      options.json
        ? `${JSON.stringify({ run: report.run.id, stage: stage.name, status: stage.status, log: lines.map((line) => `${line}\n`).join('') }, null, 2)}\n`
        : lines.map((line) => `${terminalText(line)}\n`).join(''),
    );
    return 0;
  }
  if (options.json) {
    const series = await client.runMetrics(report.run.id);
    io.stdout.write(`${JSON.stringify({ ...report, series }, null, 2)}\n`);
    return 0;
  }
  const failed = report.stages.filter((stage) => stage.status === 'failed' || stage.status === 'timed_out');
  const logs = await Promise.all(
    failed.map(async (stage) => ({ stage, lines: await client.stageLog(report.run.id, stage.name) })),
  );
  const series = await client.runMetrics(report.run.id).catch(() => ({}));
  const colors = pc.createColors(Boolean(io.stdout.isTTY) && !io.env.NO_COLOR);
  io.stdout.write(
    renderRunSummary(
      {
        report,
        series,
        stages: logs.map(({ stage, lines }) => ({ ...stage, logTail: lines.slice(-TAIL_LINES).join('\n') })),
        tracebacks: logs.flatMap(({ stage, lines }) =>
          tracebackTexts(lines).map((text) => ({ stage: stage.name, text })),
        ),
        sandbox: report.sandbox,
      },
      colors,
    ),
  );
  return 0;
}

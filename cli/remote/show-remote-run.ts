import pc from 'picocolors';
import { z } from 'zod';
import { RemoteRunReport } from '../../schemas/protocol/remote-run-report.js';
import { tracebackTexts } from '../../core/traceback.js';
import type { CliIo } from '../cli-io.js';
import { renderRunSummary } from '../render/run-summary.js';
import { UsageError } from '../usage-error.js';
import type { ApiClient } from './api-client.js';
import { SeriesReply } from './follow-run.js';
import { terminalText } from '../render/terminal-text.js';

const LogReply = z.object({ stage: z.string(), lines: z.array(z.string()) });

/** How much of a failed stage's log the summary shows, as `fluksio run` keeps it. */
const TAIL_LINES = 40;

/**
 * `fluksio show RUN --url URL`: a run of the control plane (a GitHub run, a submitted one)
 * shown as `fluksio show` shows a local run — the summary with the failed stages' log
 * tails and tracebacks, `--json` its report, `--log STAGE` that stage's whole log.
 */
export async function showRemoteRun(
  client: ApiClient,
  runId: string,
  options: { json?: boolean; log?: string },
  io: CliIo,
): Promise<number> {
  const id = encodeURIComponent(runId);
  const report = await client.request('GET', `/api/v1/runs/${id}`, RemoteRunReport);
  if (options.json) {
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const logOf = (stage: string) =>
    client.request('GET', `/api/v1/runs/${id}/logs/${encodeURIComponent(stage)}`, LogReply);
  if (options.log !== undefined) {
    if (!report.stages.some((stage) => stage.name === options.log)) {
      throw new UsageError(
        `--log: run ${report.run.id} has no stage "${options.log}" (it has: ${report.stages.map((stage) => stage.name).join(', ')})`,
      );
    }
    const { lines } = await logOf(options.log);
    io.stdout.write(lines.map((line) => `${terminalText(line)}\n`).join(''));
    return 0;
  }
  const failed = report.stages.filter((stage) => stage.status === 'failed' || stage.status === 'timed_out');
  const logs = await Promise.all(
    failed.map(async (stage) => ({ stage, lines: (await logOf(stage.name)).lines })),
  );
  const { series } = await client
    .request('GET', `/api/v1/runs/${id}/metrics`, SeriesReply)
    .catch(() => ({ series: {} }));
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

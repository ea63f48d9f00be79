import type { Colors } from 'picocolors/types.js';
import type { MetricGoals } from '../schemas/metric-diff.js';
import type { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import { isFinalRunStatus } from '../schemas/statuses.js';
import type { CliIo } from '../present/terminal/cli-io.js';
import { formatDuration } from '../schemas/format.js';
import { stageDetail, statusBadge } from '../present/terminal/progress-printer.js';
import { renderRunSummary } from '../present/terminal/run-summary.js';
import { terminalText } from '../present/terminal/terminal-text.js';
import type { ControlPlaneClient } from './control-plane-client.js';

/** How often a followed run is read again. */
const POLL_MS = 1000;

/** What followRun printed of a run: its status line, each stage's state and log lines. */
export interface FollowState {
  lastLine: string;
  seen: Map<string, string>;
  printed: Map<string, number>;
}

export function newFollowState(): FollowState {
  return { lastLine: '', seen: new Map(), printed: new Map() };
}

/**
 * Follows a queued run on the control plane to its end, printing what changes (its
 * waiting reason, the runner that took it, each stage as it starts, its output lines as
 * the runner sends them, and its end), then the same summary `fluksio run` prints.
 * Returns the final report; once `signal` is aborted, the latest one at once (the run
 * itself goes on: cancelling it is the caller's to do).
 */
export async function followRun(
  client: ControlPlaneClient,
  runId: string,
  context: {
    io: CliIo;
    colors: Colors;
    quiet: boolean;
    goals: MetricGoals;
    signal?: AbortSignal;
    /** What was printed of this run already, when following it again after an abort. */
    shown?: FollowState;
  },
): Promise<RemoteRunReport> {
  const { io, colors } = context;
  const say = (text: string) => (context.quiet ? io.stderr : io.stdout).write(text);
  const shown = (context.shown ??= newFollowState());
  const { seen, printed } = shown;
  for (;;) {
    const report = await client.run(runId);
    const line = `${report.run.status}${report.runner ? ` on ${report.runner}` : ''}${report.run.reason ? `: ${report.run.reason}` : ''}`;
    if (line !== shown.lastLine) say(`${colors.dim(runId.slice(0, 10))} ${line}\n`);
    shown.lastLine = line;
    const width = Math.max(0, ...report.stages.map((stage) => stage.name.length));
    for (const stage of report.stages) {
      if (seen.get(stage.name) === stage.status || stage.status === 'pending') continue;
      if (stage.status === 'running' && !seen.has(stage.name)) say(`${colors.bold('▸')} ${stage.name}\n`);
      // A finished stage's last lines arrived with its end: read them before saying it ended.
      if (stage.status !== 'cached' && stage.status !== 'skipped') {
        const lines = await client.stageLog(runId, stage.name).catch((): string[] => []);
        // Fewer lines than printed: the run was queued again and its stage started anew.
        const from = (printed.get(stage.name) ?? 0) > lines.length ? 0 : (printed.get(stage.name) ?? 0);
        for (const text of lines.slice(from))
          say(`  ${colors.dim(`${stage.name.padEnd(width)} │`)} ${terminalText(text)}\n`);
        printed.set(stage.name, lines.length);
      }
      if (stage.status === 'running') {
        seen.set(stage.name, 'running-shown');
        continue;
      }
      seen.set(stage.name, stage.status);
      say(
        `${statusBadge(stage.status, colors)} ${colors.bold(stage.name.padEnd(width))}  ${formatDuration(stage.durationMs).padStart(7)}  ${colors.dim(stageDetail(stage))}\n`,
      );
    }
    if (isFinalRunStatus(report.run.status)) {
      if (!context.quiet) {
        const series = await client.runMetrics(runId).catch(() => ({}));
        say(renderRunSummary({ report, series, stages: [], tracebacks: [] }, colors));
      }
      return report;
    }
    if (await aborted(context.signal, POLL_MS)) return report;
  }
}

/** Waits `ms`; true (at once) when the signal is or becomes aborted meanwhile. */
function aborted(signal: AbortSignal | undefined, ms: number): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(false);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

import type { Colors } from 'picocolors/types.js';
import type { MetricGoals } from '../schemas/metric-diff.js';
import type { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import { isFinalRunStatus } from '../schemas/statuses.js';
import type { CliIo } from '../present/terminal/cli-io.js';
import { formatDuration } from '../core/text/format.js';
import { stageDetail, statusBadge } from '../present/terminal/progress-printer.js';
import { ElapsedTicker } from '../present/terminal/elapsed-ticker.js';
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
  /** When each stage was first seen running (epoch ms here), for its elapsed time. */
  runningSince: Map<string, number>;
}

export function newFollowState(): FollowState {
  return { lastLine: '', seen: new Map(), printed: new Map(), runningSince: new Map() };
}

/**
 * Follows a queued run on the control plane to its end, printing what changes (its
 * waiting reason, the runner that took it, each stage as it starts, its output lines as
 * the runner sends them, and its end), then the same summary `fluksio run` prints.
 * With `live` (a terminal), a last line says how long the running stages have run, as
 * `fluksio run` shows it, so a silent remote stage is seen alive.
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
    /** The output is a terminal: show the running stages' elapsed time. */
    live?: boolean;
    signal?: AbortSignal;
    /** What was printed of this run already, when following it again after an abort. */
    shown?: FollowState;
  },
): Promise<RemoteRunReport> {
  const { io, colors } = context;
  const ticker = new ElapsedTicker(
    (text: string) => (context.quiet ? io.stderr : io.stdout).write(text),
    colors,
    context.live ?? false,
  );
  const say = (text: string) => ticker.write(text);
  const shown = (context.shown ??= newFollowState());
  try {
    return await follow(client, runId, { ...context, shown, say, ticker });
  } finally {
    ticker.stop();
  }
}

/** followRun's loop, printing through `say` and keeping the running stages on `ticker`. */
async function follow(
  client: ControlPlaneClient,
  runId: string,
  context: Parameters<typeof followRun>[2] & {
    shown: FollowState;
    say: (text: string) => void;
    ticker: ElapsedTicker;
  },
): Promise<RemoteRunReport> {
  const { colors, shown, say, ticker } = context;
  const { seen, printed, runningSince } = shown;
  for (;;) {
    const report = await client.run(runId);
    const line = `${report.run.status}${report.runner ? ` on ${report.runner}` : ''}${report.run.reason ? `: ${report.run.reason}` : ''}`;
    if (line !== shown.lastLine) say(`${colors.dim(runId.slice(0, 10))} ${line}\n`);
    shown.lastLine = line;
    const width = Math.max(0, ...report.stages.map((stage) => stage.name.length));
    for (const stage of report.stages) {
      // Pending again after running: the run was queued again, and the stage waits anew.
      if (stage.status === 'pending' && runningSince.delete(stage.name)) ticker.ended(stage.name);
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
        if (!runningSince.has(stage.name)) runningSince.set(stage.name, Date.now());
        ticker.started(stage.name, runningSince.get(stage.name));
        continue;
      }
      ticker.ended(stage.name);
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

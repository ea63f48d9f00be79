import { diffMetrics, type MetricGoals } from '../schemas/metric-diff.js';
import type { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import type { RunReport } from '../schemas/run-report.js';
import { hasStarted } from './has-started.js';
import type { RunLinks, RunView } from './run-view.js';

/** What a view needs beyond a `RunReport`, which has neither logs nor series. */
export interface ReportViewExtras {
  series: RunView['series'];
  /** The end of each stage's output, by stage name, where it was read. */
  logTails: Readonly<Record<string, string>>;
  /** The tracebacks found in the stages' output, in order. */
  tracebacks: readonly { stage: string; text: string }[];
  commitNote: string | null;
  /** How the report's baseline is named (`main @ 1a2b3c4`); unused without one. */
  baselineLabel: string;
  /** Why there is no baseline, when there is none. */
  noBaseline: string;
  /** Which way each metric is better: the diff is judged by these, whatever goals the report had. */
  goals: MetricGoals;
  links: RunLinks;
}

/**
 * A run as people read it, from the report `fluksio run --json` prints and the control
 * plane answers (a local run, or a submitted one followed by the action or the CLI). A
 * remote report says which runner held the run; a local one ran where it was asked.
 */
export function runViewFromReport(report: RunReport | RemoteRunReport, extras: ReportViewExtras): RunView {
  const { run } = report;
  return {
    id: run.id,
    attempt: 'attempt' in report ? report.attempt : 1,
    pipelinePath: run.pipelinePath,
    status: run.status,
    reason: run.reason,
    stamp: {
      commit: run.commit,
      commitNote: extras.commitNote,
      dirty: run.dirty,
      dirtyReasons: run.dirtyReasons,
      codeDigest: run.codeDigest,
      params: run.params,
      paramsDigest: run.paramsDigest,
      envDigest: run.envDigest,
    },
    placement: 'runner' in report ? { runner: report.runner, sandbox: report.sandbox } : null,
    times: {
      queuedAt: run.createdAt,
      startedAt: run.startedAt,
      finishedAt: run.finishedAt,
      durationMs: run.durationMs,
    },
    compute:
      run.cpuSeconds === null && run.gpuSeconds === null
        ? null
        : { cpuSeconds: run.cpuSeconds ?? 0, gpuSeconds: run.gpuSeconds ?? 0 },
    stages: report.stages.map((stage) => ({
      name: stage.name,
      status: stage.status,
      durationMs: hasStarted(stage.status) ? stage.durationMs : null,
      cacheKey: stage.cacheKey,
      cachedFrom: stage.cachedFrom,
      cachedFromTeam: stage.cachedFromTeam,
      exitCode: stage.exitCode,
      error: stage.error,
      reasons: stage.reasons,
      notes: stage.notes,
      logTail: extras.logTails[stage.name] ?? '',
      tracebacks: extras.tracebacks.filter((each) => each.stage === stage.name).map((each) => each.text),
      usage: stage.usage,
      pending: stage.pending,
    })),
    metrics: report.metrics,
    metricDiff: {
      baseline: report.baseline ? { runId: report.baseline.id, label: extras.baselineLabel } : null,
      noBaseline: extras.noBaseline,
      rows: diffMetrics(report.metrics, report.baseline ? baselineMetrics(report) : null, extras.goals),
      goals: extras.goals,
    },
    series: extras.series,
    annotations: report.annotations,
    links: extras.links,
  };
}

/**
 * The baseline's metrics, as the report's diff carries them: a control plane judges a
 * submitted run by no goals (it was not given the pipeline's), the step by the pipeline's.
 */
function baselineMetrics(report: RunReport): Record<string, number> {
  return Object.fromEntries(
    report.diff.flatMap((row) => (row.baseline === null ? [] : [[row.name, row.baseline]])),
  );
}

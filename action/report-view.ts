import type { RunView } from '../present/run-view.js';
import { runViewFromReport } from '../present/run-view-from-report.js';
import type { MetricGoals } from '../schemas/metric-diff.js';
import type { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import type { RunReport } from '../schemas/run-report.js';
import { baselineLabel, commitNote } from './baseline-commits.js';
import { workflowRunUrl } from './check-run-target.js';
import type { WorkflowContext } from './workflow-context.js';

/** What the step knows of a run beyond its report. */
export interface ReportViewInput {
  report: RunReport | RemoteRunReport;
  workflow: WorkflowContext;
  goals: MetricGoals;
  series: RunView['series'];
  logTails: Readonly<Record<string, string>>;
  tracebacks: readonly { stage: string; text: string }[];
  /** Why there is no baseline, when there is none: where it was looked for. */
  noBaseline: string;
  /** The control plane a submitted run is on; null for a run in the job. */
  serverUrl: string | null;
}

/**
 * A run of the step as people read it: the merge commit named as such, the baseline
 * named as the app names it, and the whole run at the control plane (`fluksio show`) for
 * a submitted run, in the workflow run's log for one that ran in the job.
 */
export function reportView(input: ReportViewInput): RunView {
  const { report, workflow } = input;
  return runViewFromReport(report, {
    series: input.series,
    logTails: input.logTails,
    tracebacks: input.tracebacks,
    commitNote: commitNote(workflow, report.run.commit),
    baselineLabel: baselineLabel(workflow, report.baseline?.commit ?? null, report.run.commit),
    noBaseline: input.noBaseline,
    goals: input.goals,
    links: {
      showCommand: input.serverUrl ? `fluksio show ${report.run.id} --url ${input.serverUrl}` : null,
      detailsUrl: workflowRunUrl(workflow),
      detailsLabel: "the workflow run's log",
    },
  });
}

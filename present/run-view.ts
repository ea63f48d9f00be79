import type { Annotation } from '../schemas/annotation.js';
import type { JobPending } from '../schemas/job-pending.js';
import type { ParamValue } from '../schemas/key-inputs.js';
import type { MetricDiffRow, MetricGoals } from '../schemas/metric-diff.js';
import type { StageUsage } from '../schemas/stage-usage.js';
import type { RunStatus, StageStatus } from '../schemas/statuses.js';

/**
 * What a run is, for people: the one model every presentation of a run reads (the app's
 * check run, the action's check run and step summary, and the run pages), so that they
 * say the same thing. Adapters build it from the control plane's rows
 * (app/github/run-view-from-detail.ts) and from a `RunReport` (run-view-from-report.ts).
 * Plain data: times are ISO strings, so a view can travel as JSON.
 */
export interface RunView {
  id: string;
  /** 1 for the first attempt; a run queued again after its runner vanished counts up. */
  attempt: number;
  pipelinePath: string;
  status: RunStatus;
  /** Why the run is in its status (a waiting reason, a cancel, the failing stage), or null. */
  reason: string | null;
  stamp: RunStamp;
  /** Where the run executed: a runner of the control plane; null for a run in the job or on a laptop. */
  placement: RunPlacement | null;
  times: RunTimes;
  /** What its Slurm jobs used, every attempt's; null when no stage ran as a job. */
  compute: RunCompute | null;
  /** In the order the run first reported them. */
  stages: StageView[];
  /** The run's metrics so far (the final ones once it finished), by dotted name. */
  metrics: Record<string, number>;
  metricDiff: MetricDiff;
  /** Metric name → its series, for sparklines. */
  series: Record<string, { stage: string; points: { step: number; value: number }[] }>;
  /** Every annotation, on repository files or not, in the order reported. */
  annotations: Annotation[];
  links: RunLinks;
}

/** What ran: the stamp of DESIGN §6. */
export interface RunStamp {
  commit: string | null;
  /** Which commit that is, in words (`GitHub's merge of #7 …`), when it needs saying. */
  commitNote: string | null;
  dirty: boolean;
  /** What made it dirty (code that changed while stages ran); empty for uncommitted changes. */
  dirtyReasons: string[];
  codeDigest: string | null;
  params: Record<string, ParamValue>;
  paramsDigest: string;
  envDigest: string | null;
}

/** The runner that holds or held a remote run, and how it isolated the stages. */
export interface RunPlacement {
  /** Null while nobody claimed it. */
  runner: string | null;
  /** `bubblewrap 0.8.0: …`; null when the stages ran unsandboxed or have not started. */
  sandbox: string | null;
}

/** CPU- and GPU-seconds a run's Slurm jobs used (schemas/stage-usage.ts). */
export interface RunCompute {
  cpuSeconds: number;
  gpuSeconds: number;
}

/** ISO timestamps; `durationMs` once the run ended. */
export interface RunTimes {
  queuedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
}

/** One stage as people read it: ran or cached (from which run), why it ran, why it failed. */
export interface StageView {
  name: string;
  status: StageStatus;
  /** How long it took; null before it started. */
  durationMs: number | null;
  cacheKey: string | null;
  cachedFrom: string | null;
  /** The cached outputs came from the team's cache on the control plane, not this store. */
  cachedFromTeam: boolean;
  exitCode: number | null;
  error: string | null;
  /** Why it ran rather than restored: `train.py changed`, `lr 0.01 → 0.1`. */
  reasons: string[];
  /** How it is keyed, when that needs saying. */
  notes: string[];
  /** The end of its output, as far as known ('' when not). */
  logTail: string;
  /** The tracebacks found in its output, innermost last. */
  tracebacks: string[];
  /** The Slurm job it ran as and what that used; null for none. */
  usage: StageUsage | null;
  /** While it runs: why its Slurm job waits in the queue; null when it does not. */
  pending: JobPending | null;
}

/** The metrics against the baseline (DESIGN §7), or why there is none. */
export interface MetricDiff {
  /** The run compared against and how to name it (`main @ 1a2b3c4 (merge-base)`); null for none. */
  baseline: { runId: string; label: string } | null;
  /** The sentence that says why there is no baseline (unused when there is one). */
  noBaseline: string;
  rows: MetricDiffRow[];
  /** The pipeline's goals: the metrics a title leads with, and which way is better. */
  goals: MetricGoals;
}

/** Where people find the whole run, its logs and its page. */
export interface RunLinks {
  /** The command that shows the whole run (`fluksio show … --url …`); null when none can reach it. */
  showCommand: string | null;
  /** A page about the run (the control plane's run, the workflow run); null for none. */
  detailsUrl: string | null;
  /** How that page is named in a sentence (`the workflow run's log`). */
  detailsLabel: string;
  /** An image of the main metric's curves against the baseline's (a signed link); absent for none. */
  chart?: { metric: string; url: string } | null;
}

import type { MetricGoals } from './metric-diff.js';
import type { MetricSeries } from './metric-series.js';
import type { RunReport } from './run-report.js';

/**
 * What the run page draws (pages/run-page.ts), as `GET /pages/api/runs/:id` answers it:
 * the run's report (stamp, stages, diff against its baseline), every metric series of
 * the run and of its baseline, and each failure's traceback with a link to the raising
 * line. Types only: the browser bundle imports them, never code.
 */
export interface RunPageData {
  report: RunReport;
  /** `owner/name` on a control plane, `local` for the embedded store. */
  repository: string;
  runner: string | null;
  trigger: string | null;
  prNumber: number | null;
  /** Where the stages' stamp commit is browsable, `https://github.com/OWNER/REPO/commit/SHA`; null locally. */
  commitUrl: string | null;
  /** Cut down to the chart's width when the request named one (`?buckets=`): `total` says how many points there are. */
  series: Record<string, PageSeries>;
  baselineSeries: Record<string, PageSeries>;
  goals: MetricGoals;
  tracebacks: PageTraceback[];
  /** True once the run is in a final state: nothing more will be drawn. */
  final: boolean;
  /**
   * Set when the request named the steps it held (`?after=`, or a live update): `series`
   * hold only newer points, to append, and `baselineSeries` is empty (it does not change).
   */
  partial?: boolean;
}

/**
 * A series as a page draws it: with `total`, its points were cut down to what a chart of
 * the requested width shows (min and max per pixel, the first and last kept), and
 * `total` is how many the run streamed; without it, every point is there.
 */
export type PageSeries = MetricSeries & { total?: number };

/**
 * One series between two steps at the resolution a zoomed chart shows
 * (`GET /pages/api/runs/:id/series?name=&from=&to=&buckets=`), and its baseline's.
 */
export interface SeriesRangeData {
  name: string;
  from: number;
  to: number;
  series: PageSeries | null;
  baseline: PageSeries | null;
}

/** A failure's traceback, with where its innermost repository frame raised. */
export interface PageTraceback {
  stage: string;
  text: string;
  /** `train.py:42`, from the stage's annotation; null when the traceback names no repository file. */
  location: string | null;
  /** `https://github.com/OWNER/REPO/blob/SHA/train.py#L42`; null off GitHub. */
  url: string | null;
}

/** One run of a sweep or a comparison: its params, final metrics and series. */
export interface PageRunSummary {
  id: string;
  status: string;
  params: Record<string, string | number | boolean>;
  metrics: Record<string, number>;
  series: Record<string, MetricSeries>;
  groupIndex: number | null;
}

/** What the sweep and compare pages draw. */
export interface RunsPageData {
  repository: string;
  /** The sweep's id; null for a comparison of chosen runs. */
  groupId: string | null;
  goals: MetricGoals;
  runs: PageRunSummary[];
}

/**
 * Where a stage's log continues: `line` is the number of lines before it, `position` where
 * its source resumes reading (the next event seq on a control plane, a byte offset in a
 * project's store). Sent as the SSE event id `line.position`, so a reconnecting
 * EventSource resumes there.
 */
export interface LogCursor {
  line: number;
  position: number;
}

/** A piece of a stage's log for the live stream: lines `from` … `from + lines.length - 1`. */
export interface LogChunk {
  from: number;
  lines: string[];
}

/** One run in a list: enough to pick it out and open its page. */
export interface PageRunListItem {
  id: string;
  status: string;
  params: Record<string, string | number | boolean>;
  metrics: Record<string, number>;
  branch: string | null;
  commit: string | null;
  prNumber: number | null;
  trigger: string | null;
  groupId: string | null;
  createdAt: string;
  durationMs: number | null;
}

/** What the run list draws (`GET /pages/api/runs?repo=…`): a page of runs, newest first. */
export interface RunListPageData {
  repository: string;
  /** The pull request listed, or null for the whole repository. */
  prNumber: number | null;
  runs: PageRunListItem[];
  /** The `before` of the next (older) page; null on the last. */
  next: string | null;
}

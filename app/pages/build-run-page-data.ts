import type { MetricGoals } from '../../schemas/metric-diff.js';
import type { PageTraceback, RunPageData } from '../../schemas/page-data.js';
import { buildRunReport } from '../../schemas/run-report.js';
import { isFinalRunStatus } from '../../schemas/statuses.js';
import type { Run } from '../../schemas/tables/runs.js';
import { tracebackTexts } from '../../core/traceback.js';
import type { RunDetail } from '../../store/runs/get-run-detail.js';
import { githubBlobUrl, githubCommitUrl } from './github-links.js';

/**
 * The run page's data from a run's rows, its baseline (with its series) and the metric
 * goals. Each failed stage's tracebacks come from its log tail; the raising line is the
 * stage's error annotation (the runner put it on the innermost repository frame), linked
 * on GitHub when the run's code is a GitHub repository's (isGitHubRun).
 */
export function buildRunPageData({
  detail,
  baseline,
  goals,
}: {
  detail: RunDetail;
  baseline: { run: Run; series: RunDetail['series'] } | null;
  goals: MetricGoals;
}): RunPageData {
  const { run } = detail;
  const tracebacks: PageTraceback[] = [];
  for (const stage of detail.stages) {
    if (stage.status !== 'failed' && stage.status !== 'timed_out') continue;
    const raised = detail.annotations.find(
      (annotation) =>
        annotation.stage === stage.name &&
        annotation.level === 'error' &&
        annotation.path !== null &&
        annotation.line !== null,
    );
    for (const text of tracebackTexts(stage.logTail.split('\n'))) {
      const location = raised?.path && raised.line ? `${raised.path}:${raised.line}` : null;
      tracebacks.push({
        stage: stage.name,
        text,
        location,
        url:
          raised?.path && raised.line && run.commit
            ? githubBlobUrl(run, run.commit, raised.path, raised.line)
            : null,
      });
    }
  }
  return {
    report: buildRunReport(detail, baseline?.run ?? null, goals),
    repository: run.repository,
    runner: run.runnerName,
    trigger: run.trigger,
    prNumber: run.prNumber,
    commitUrl: run.commit ? githubCommitUrl(run, run.commit) : null,
    series: detail.series,
    baselineSeries: baseline?.series ?? {},
    goals,
    tracebacks,
    final: isFinalRunStatus(run.status),
  };
}

import { newId } from '../core/new-id.js';
import type { RunReport } from '../schemas/run-report.js';
import { readCodeIndex } from '../runner/keys/code-index.js';
import { executeLocalRun } from '../local/execute-local-run.js';
import { openLocalState } from '../local/local-state.js';
import { renderRunSummary } from '../present/terminal/run-summary.js';
import { checkRunName, sweptParams } from '../present/github/check-run-name.js';
import { renderCheckRun } from '../present/github/render-check-run.js';
import type { RunView } from '../present/run-view.js';
import { actionResult, type ActionResult } from './action-result.js';
import { baselineCommits, noBaselineNote } from './baseline-commits.js';
import { CheckRunPublisher } from './check-run-publisher.js';
import { checkRunTargetOf } from './check-run-target.js';
import type { ActionInputs } from './input-helper.js';
import type { ModeContext } from './mode-context.js';
import { checkRunResult, OpenCheckRuns, unfinishedRunResult } from './open-check-runs.js';
import { readPipelineInputs } from './read-pipeline-inputs.js';
import { reportFailures } from './report-failures.js';
import { reportView } from './report-view.js';
import { runStepSummary, sweepStepSummary } from './step-summary.js';
import { StageGroupPrinter } from './stage-group-printer.js';
import { stageEnvironmentSource } from './stage-environment-source.js';

/**
 * Local mode: runs the pipeline in the job's checkout with the engine, once per point of
 * a sweep, keeping runs and the stage cache in `.fluksio/` beside the pipeline (which
 * actions/cache can carry from job to job). Each stage's output is a fenced log group;
 * each run gets a check run on the pull request's head when the token may create one.
 */
export async function runLocalMode(inputs: ActionInputs, context: ModeContext): Promise<ActionResult> {
  const { log, colors, signal } = context;
  const { project, pipeline, notes, grid, swept } = await readPipelineInputs(inputs);
  // What a dvc.yaml asks that fluksio cannot honour, named before anything runs.
  for (const note of notes)
    log.annotate('warning', note, { file: project.pipelinePath, title: 'Not honoured' });
  const state = await openLocalState(project.stateDir);
  const target = checkRunTargetOf(inputs.workflow);
  const checkRuns = new OpenCheckRuns(
    target
      ? new CheckRunPublisher({ token: inputs.githubToken, apiUrl: inputs.workflow.apiUrl, target, log })
      : null,
  );
  const environment = stageEnvironmentSource(context.env, [inputs.githubToken, inputs.server?.token ?? '']);
  try {
    // The tree is read once the store is ours: no other run's stages change it after that.
    let codeIndex = await readCodeIndex(project.workspace.repoRoot);
    const groupId = grid.length > 1 ? newId() : null;
    const reports: RunReport[] = [];
    const views: RunView[] = [];
    const summaries: string[] = [];
    for (const [index, params] of grid.entries()) {
      if (signal.aborted) break;
      if (groupId) log.untrusted(colors.bold(`\nSweep ${groupId}: run ${index + 1} of ${grid.length}\n`));
      // The previous run of the sweep executed stages: the tree is read again for this one.
      if (index > 0) codeIndex = await readCodeIndex(project.workspace.repoRoot);
      const name = checkRunName(inputs.checkName, groupId ? sweptParams(params, swept) : null);
      const { report, detail, outcome } = await executeLocalRun({
        project,
        pipeline,
        params,
        codeIndex,
        state,
        environment,
        jobs: 1,
        noCache: inputs.noCache,
        groupId,
        groupIndex: groupId ? index : null,
        progress: new StageGroupPrinter(log, colors, Object.keys(pipeline.stages)),
        signal,
        onStart: ({ id, stamp }) => {
          log.untrusted(
            `${colors.bold('fluksio run')} ${id}  ${colors.dim(`${project.pipelinePath} · ${stamp.commit ?? 'no commit'}${stamp.dirty ? ' (dirty)' : ''}`)}\n`,
          );
          checkRuns.start(name, id);
        },
        // The workflow's branch: a pull request's checkout is a detached merge commit.
        ...(inputs.workflow.branch === null ? {} : { branch: inputs.workflow.branch }),
        baselineCommits: (stamp) =>
          baselineCommits(project.workspace.repoRoot, inputs.workflow, stamp.commit),
      });
      const tracebacks = outcome.tracebacks.map(({ stage, traceback }) => ({ stage, text: traceback.text }));
      log.untrusted(
        renderRunSummary({ report, series: detail.series, stages: detail.stages, tracebacks }, colors),
      );
      const view = reportView({
        report,
        workflow: inputs.workflow,
        goals: pipeline.metrics,
        series: detail.series,
        logTails: Object.fromEntries(detail.stages.map((stage) => [stage.name, stage.logTail])),
        tracebacks,
        noBaseline: noBaselineNote(inputs.workflow),
        serverUrl: null,
      });
      const rendered = renderCheckRun(view, { name });
      log.closeFence();
      reportFailures(log, report);
      await checkRuns.complete(report.run.id, checkRunResult(rendered, report.run.status, signal.aborted));
      reports.push(report);
      views.push(view);
      summaries.push(runStepSummary(rendered, view));
    }
    const summary = groupId ? sweepStepSummary(groupId, views, summaries) : (summaries[0] ?? '');
    return actionResult(reports, groupId, summary);
  } finally {
    // A run that threw after it started (its store failing, say) leaves no check run in progress.
    await checkRuns.completeRest((runId) =>
      Promise.resolve(unfinishedRunResult(runId, signal.aborted, null)),
    );
    await state.close();
  }
}

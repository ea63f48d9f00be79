import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { checkRunName, sweptParams } from '../present/github/check-run-name.js';
import { renderCheckRun } from '../present/github/render-check-run.js';
import type { RunView } from '../present/run-view.js';
import { digestOf } from '../core/canonical-json.js';
import type { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import { MAX_BASELINE_COMMITS } from '../schemas/protocol/run-report-query.js';
import { isFinalRunStatus } from '../schemas/statuses.js';
import { tracebackTexts } from '../core/traceback.js';
import type { SubmitRunRequest } from '../schemas/protocol/submit-run.js';
import { submitRunRequest } from '../client/submit-run-request.js';
import type { CliIo } from '../present/terminal/cli-io.js';
import type { ControlPlaneClient } from '../client/control-plane-client.js';
import { ForbiddenError, UnauthorizedError } from '../client/control-plane-errors.js';
import { followRun } from '../client/follow-run.js';
import { submitterClient } from '../client/server-connection.js';
import { headAndOrigin, originRepository, type OriginRepository } from '../client/origin-repository.js';
import type { SeriesByMetric } from '../present/terminal/run-summary.js';
import { UsageError } from '../present/terminal/usage-error.js';
import { actionResult, type ActionResult } from './action-result.js';
import { baselineCommits } from './baseline-commits.js';
import { cancelSubmittedRuns } from './cancel-submitted-runs.js';
import { CheckRunPublisher } from './check-run-publisher.js';
import { checkRunTargetOf } from './check-run-target.js';
import type { ActionInputs } from './input-helper.js';
import type { ModeContext } from './mode-context.js';
import { checkRunResult, OpenCheckRuns, unfinishedRunResult } from './open-check-runs.js';
import { readPipelineInputs } from './read-pipeline-inputs.js';
import { reportFailures } from './report-failures.js';
import { reportView } from './report-view.js';
import { runStepSummary, sweepStepSummary } from './step-summary.js';
import { markSubmissionSettled, saveSubmittedRuns } from './submission-state.js';
import type { WorkflowContext } from './workflow-context.js';
import { messageOf } from '../core/text/message-of.js';

/**
 * Submit mode: queues the runs (one, or a sweep's grid) of the commit the workspace holds
 * on the control plane named by `server`, each with an Idempotency-Key of its own (see
 * submissionId), so a retried request never queues a run twice. With `wait`, follows
 * them to the end in the log, and fails when one did not succeed; without, returns their
 * ids at once. Cancelling the workflow cancels the runs: here when the step is
 * signalled, and in the post step when it was killed first.
 */
export async function runSubmitMode(inputs: ActionInputs, context: ModeContext): Promise<ActionResult> {
  let result: ActionResult;
  try {
    result = await submitRuns(inputs, context);
  } catch (error) {
    // A step that failed by itself (the control plane unreachable while it followed the
    // runs, a later submission of a sweep refused) leaves the runs it queued to go on:
    // the post step cancels only a killed step's. One that failed while cancelling them
    // leaves them to the post step, which tries again.
    if (!context.signal.aborted) markSubmissionSettled();
    throw error;
  }
  markSubmissionSettled();
  return result;
}

async function submitRuns(inputs: ActionInputs, context: ModeContext): Promise<ActionResult> {
  const { log, colors, signal } = context;
  const server = inputs.server;
  if (!server) throw new Error('Submit mode needs the server input');
  const { project, pipeline, notes, grid, swept } = await readPipelineInputs(inputs);
  // What a dvc.yaml asks that fluksio cannot honour, named before anything runs.
  for (const note of notes)
    log.annotate('warning', note, { file: project.pipelinePath, title: 'Not honoured' });
  const { commit, origin } = await submissionSource(project.workspace.repoRoot);
  const client = submitterClient(server);
  await checkServerAnswers(client, server.url);

  // Where the baseline is, from this checkout's history; the control plane fixes each run's
  // baseline among them when the run finishes (a pull request's: its base branch).
  const commits = (await baselineCommits(project.workspace.repoRoot, inputs.workflow, commit)).slice(
    0,
    MAX_BASELINE_COMMITS,
  );
  const nonce = randomBytes(8).toString('hex');
  const groupId = grid.length > 1 ? submissionId(inputs.workflow, nonce, { commit, grid }) : null;
  const runIds: string[] = [];
  const queued: RemoteRunReport[] = [];
  for (const [index, params] of grid.entries()) {
    // A cancelled sweep submits no more of its grid.
    if (signal.aborted) break;
    const request = {
      ...submitRunRequest({
        origin,
        commit,
        pipelinePath: project.pipelinePath,
        pipeline,
        params,
        noCache: inputs.noCache,
        group: groupId ? { id: groupId, index } : null,
        branch: inputs.workflow.branch,
      }),
      baselineCommits: commits,
    };
    const report = await submit(client, request, `${submissionId(inputs.workflow, nonce, request)}-${index}`);
    // Saved once the control plane answered: a step killed while a submission is in
    // flight leaves that run unknown to the post step, which cannot cancel it (it runs).
    runIds.push(report.run.id);
    queued.push(report);
    saveSubmittedRuns(runIds);
    log.untrusted(
      `${colors.bold('queued')} ${report.run.id}  ${report.repository}@${commit.slice(0, 10)}  ${report.run.reason ?? ''}\n`,
    );
  }
  if (signal.aborted) return cancelRuns(client, server.url, queued, groupId, log);
  if (!inputs.wait) {
    log.closeFence();
    const summary = `### fluksio: queued on ${server.url}\n\n${queued.map((report) => `- \`${report.run.id}\` ${report.run.reason ?? ''}`).join('\n')}\n`;
    return actionResult(queued, groupId, summary);
  }

  const target = checkRunTargetOf(inputs.workflow);
  const checkRuns = new OpenCheckRuns(
    target
      ? new CheckRunPublisher({ token: inputs.githubToken, apiUrl: inputs.workflow.apiUrl, target, log })
      : null,
  );
  const nameOf = (report: RemoteRunReport) =>
    checkRunName(inputs.checkName, groupId ? sweptParams(report.run.params, swept) : null);
  const present = async (report: RemoteRunReport, withLogs: boolean) => {
    const logs = withLogs ? await failedStageLogs(client, report) : {};
    const view = reportView({
      report,
      workflow: inputs.workflow,
      goals: pipeline.metrics,
      series: withLogs ? await seriesOf(client, report.run.id) : {},
      logTails: logs,
      tracebacks: Object.entries(logs).flatMap(([stage, log]) =>
        tracebackTexts(log.split('\n')).map((text) => ({ stage, text })),
      ),
      noBaseline: `the control plane at ${server.url} has no successful run of this pipeline ${commits.length > 0 ? 'at the commits where it was looked for (the base of this change and its first-parent ancestors)' : 'to compare with: this checkout has no history to look for one in'}.`,
      serverUrl: server.url,
    });
    return { view, rendered: renderCheckRun(view, { name: nameOf(report) }) };
  };
  try {
    for (const report of queued) checkRuns.start(nameOf(report), report.run.id);
    const io: CliIo = {
      stdout: logStream(log),
      stderr: logStream(log),
      cwd: project.workspace.repoRoot,
      env: context.env,
    };
    const reports: RemoteRunReport[] = [];
    for (const runId of runIds) {
      if (signal.aborted) break;
      reports.push(
        await followRun(client, runId, { io, colors, quiet: false, goals: pipeline.metrics, signal }),
      );
    }
    if (signal.aborted) return await cancelRuns(client, server.url, queued, groupId, log);

    const finals: RemoteRunReport[] = [];
    const views: RunView[] = [];
    const summaries: string[] = [];
    for (const followed of reports) {
      // Read again with where to look for the baseline: the diff the check run shows.
      const report = (await latestReport(client, followed.run.id, commits)) ?? followed;
      const { view, rendered } = await present(report, true);
      log.closeFence();
      reportFailures(log, report);
      await checkRuns.complete(report.run.id, checkRunResult(rendered, report.run.status, false));
      finals.push(report);
      views.push(view);
      summaries.push(runStepSummary(rendered, view));
    }
    const summary = groupId ? sweepStepSummary(groupId, views, summaries) : (summaries[0] ?? '');
    return actionResult(finals, groupId, summary);
  } finally {
    // Whatever stopped the step, no check run stays in progress: each gets its run's
    // result as the control plane has it now.
    await checkRuns.completeRest(async (runId) => {
      const report = await latestReport(client, runId, commits);
      if (!report || !isFinalRunStatus(report.run.status)) {
        return unfinishedRunResult(
          runId,
          signal.aborted,
          `\`fluksio show ${runId} --url ${server.url}\` shows it.`,
        );
      }
      const { rendered } = await present(report, false);
      return checkRunResult(rendered, report.run.status, signal.aborted);
    });
  }
}

/**
 * The cancelled workflow's end: cancels the runs still active, then reads every submitted
 * run again, so the outputs say what became of each (a running run is `running` until its
 * runner stops it, at its next heartbeat).
 */
async function cancelRuns(
  client: ControlPlaneClient,
  serverUrl: string,
  queued: readonly RemoteRunReport[],
  groupId: string | null,
  log: ModeContext['log'],
): Promise<ActionResult> {
  log.closeFence();
  if (queued.length === 0) return actionResult([], groupId, '');
  const runIds = queued.map((report) => report.run.id);
  const cancelled = await cancelSubmittedRuns(client, runIds, 'The workflow run was cancelled');
  const reports = await Promise.all(
    queued.map(async (report) => (await latestReport(client, report.run.id)) ?? report),
  );
  return {
    ...actionResult(reports, groupId, ''),
    failure: `The workflow was cancelled; cancelled run${cancelled.length === 1 ? '' : 's'} ${cancelled.join(', ') || '(none were still active)'} on ${serverUrl}`,
  };
}

/**
 * The run as the control plane has it now, compared with a baseline among `commits` when
 * given; null when it does not answer.
 */
async function latestReport(
  client: ControlPlaneClient,
  runId: string,
  commits: readonly string[] = [],
): Promise<RemoteRunReport | null> {
  return client.run(runId, {}, { baselineCommits: commits }).catch(() => null);
}

/** The commit the workspace holds (a pull request's merge commit) and how runners fetch it. */
async function submissionSource(repoRoot: string): Promise<{ commit: string; origin: OriginRepository }> {
  const { commit, remoteUrl } = await headAndOrigin(repoRoot);
  if (!remoteUrl) {
    throw new Error(
      'Input \'server\': the workspace has no remote "origin" for runners to fetch from; check the repository out with actions/checkout first',
    );
  }
  try {
    return { commit, origin: originRepository(remoteUrl, repoRoot) };
  } catch (error) {
    if (error instanceof UsageError) throw new Error(`Input 'server': ${error.message}`, { cause: error });
    throw error;
  }
}

/** Refuses a server that does not answer before anything is submitted to it. */
async function checkServerAnswers(client: ControlPlaneClient, url: string): Promise<void> {
  try {
    await client.health();
  } catch (error) {
    const why = messageOf(error);
    throw new Error(`Input 'server': ${url} is not a fluksio control plane that answers (${why})`, {
      cause: error,
    });
  }
}

async function submit(
  client: ControlPlaneClient,
  request: SubmitRunRequest,
  key: string,
): Promise<RemoteRunReport> {
  try {
    return await client.submitRun(request, key);
  } catch (error) {
    if (error instanceof UnauthorizedError || error instanceof ForbiddenError) {
      throw new Error(`Input 'server-token': the control plane refused it: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
}

/**
 * A name for this submission that is the same when the step's request is retried and
 * different for every other: the workflow run and attempt (a re-run of the workflow
 * queues new runs), the job and step, what is submitted, and `nonce`, random for each
 * execution of the step: the legs of a matrix job share every GITHUB_* variable, so
 * without it two legs submitting the same thing would get one run between them.
 */
function submissionId(workflow: WorkflowContext, nonce: string, submitted: unknown): string {
  const digest = digestOf({
    repository: workflow.repository,
    job: workflow.job,
    step: workflow.step,
    nonce,
    submitted,
  });
  return `gha-${workflow.runId || 'local'}-${workflow.runAttempt}-${digest.slice(0, 16)}`;
}

async function seriesOf(client: ControlPlaneClient, runId: string): Promise<SeriesByMetric> {
  return client.runMetrics(runId).catch(() => ({}));
}

/** Each failed stage's log, read from the control plane, by stage name (the summary shows its end). */
async function failedStageLogs(
  client: ControlPlaneClient,
  report: RemoteRunReport,
): Promise<Record<string, string>> {
  const failed = report.stages.filter((stage) => stage.status === 'failed' || stage.status === 'timed_out');
  const logs = await Promise.all(
    failed.map(async (stage) => {
      const lines = await client.stageLog(report.run.id, stage.name).catch((): string[] => []);
      return [stage.name, lines.join('\n')] as const;
    }),
  );
  return Object.fromEntries(logs);
}

/** A stream into the job log, fenced: what the control plane reports quotes stages. */
function logStream(log: ModeContext['log']): Writable {
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      log.untrusted(chunk.toString());
      callback();
    },
  });
}

import { Writable } from 'node:stream';
import { simpleGit } from 'simple-git';
import { z } from 'zod';
import { digestOf } from '../schemas/canonical-json.js';
import { RemoteRunReport } from '../schemas/protocol/remote-run-report.js';
import type { SubmitRunRequest } from '../schemas/protocol/submit-run.js';
import type { CliIo } from '../cli/cli-io.js';
import { ApiClient, ApiRequestError } from '../cli/remote/api-client.js';
import { followRun } from '../cli/remote/follow-run.js';
import { originRepository, type OriginRepository } from '../cli/remote/origin-repository.js';
import type { SeriesByMetric } from '../cli/render/run-summary.js';
import { UsageError } from '../cli/usage-error.js';
import { actionResult, type ActionResult } from './action-result.js';
import { commitNote } from './baseline-commits.js';
import { cancelSubmittedRuns } from './cancel-submitted-runs.js';
import { checkRunName, checkRunTargetOf } from './check-run-naming.js';
import { CheckRunPublisher } from './check-run-publisher.js';
import type { ActionInputs } from './input-helper.js';
import type { ModeContext } from './mode-context.js';
import { readPipelineInputs } from './read-pipeline-inputs.js';
import { checkRunTitle, renderRunMarkdown, renderSweepMarkdown } from './render-run-markdown.js';
import { reportFailures } from './report-failures.js';
import { markSubmissionSettled, saveSubmittedRuns } from './submission-state.js';
import type { WorkflowContext } from './workflow-context.js';

const SeriesReply = z.object({
  series: z.record(
    z.string(),
    z.object({ stage: z.string(), points: z.array(z.object({ step: z.number(), value: z.number() })) }),
  ),
});
const LogReply = z.object({ lines: z.array(z.string()) });
/** Lines of a failed stage's log fetched for the summary. */
const TAIL_LINES = 25;

/**
 * Submit mode: queues the runs (one, or a sweep's grid) of the commit the workspace holds
 * on the control plane named by `server`, each with an Idempotency-Key made from the
 * workflow run and its attempt, so a retried request never queues a run twice. With
 * `wait`, follows them to the end in the log, and fails when one did not succeed;
 * without, returns their ids at once. Cancelling the workflow cancels the runs: here
 * when the step is signalled, and in the post step when it was killed first.
 */
export async function runSubmitMode(inputs: ActionInputs, context: ModeContext): Promise<ActionResult> {
  const { log, colors, signal } = context;
  const server = inputs.server;
  if (!server) throw new Error('Submit mode needs the server input');
  const { project, pipeline, grid, swept } = await readPipelineInputs(inputs);
  const { commit, origin } = await submissionSource(project.workspace.repoRoot);
  const client = new ApiClient(server.url, server.token);
  await checkServerAnswers(client, server.url);

  const groupId = grid.length > 1 ? submissionId(inputs.workflow, { commit, grid }) : null;
  const runIds: string[] = [];
  const queued: RemoteRunReport[] = [];
  for (const [index, params] of grid.entries()) {
    const request: SubmitRunRequest = {
      repository: origin.repository,
      cloneUrl: origin.cloneUrl,
      commit,
      pipelinePath: project.pipelinePath,
      params,
      labels: pipeline['runs-on'],
      noCache: inputs.noCache,
      retries: pipeline.retries,
      timeoutMs: pipeline.timeout,
      ...(groupId ? { group: { id: groupId, index } } : {}),
    };
    const report = await submit(client, request, `${submissionId(inputs.workflow, request)}-${index}`);
    runIds.push(report.run.id);
    queued.push(report);
    saveSubmittedRuns(runIds);
    log.untrusted(
      `${colors.bold('queued')} ${report.run.id}  ${report.repository}@${commit.slice(0, 10)}  ${report.run.reason ?? ''}\n`,
    );
  }
  if (!inputs.wait) {
    markSubmissionSettled();
    log.closeFence();
    const summary = `### fluksio: queued on ${server.url}\n\n${queued.map((report) => `- \`${report.run.id}\` ${report.run.reason ?? ''}`).join('\n')}\n`;
    return actionResult(queued, groupId, summary);
  }

  const target = checkRunTargetOf(inputs.workflow);
  const checks = target
    ? new CheckRunPublisher({ token: inputs.githubToken, apiUrl: inputs.workflow.apiUrl, target, log })
    : null;
  const checkRuns = await Promise.all(
    queued.map(
      (report) =>
        checks?.start(checkRunName(inputs.checkName, report.run.params, swept), report.run.id) ?? null,
    ),
  );
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
  if (signal.aborted) {
    log.closeFence();
    const cancelled = await cancelSubmittedRuns(client, runIds, 'The workflow run was cancelled');
    markSubmissionSettled();
    return {
      ...actionResult(reports, groupId, ''),
      failure: `The workflow was cancelled; cancelled run${cancelled.length === 1 ? '' : 's'} ${cancelled.join(', ') || '(none were still active)'} on ${server.url}`,
    };
  }
  markSubmissionSettled();

  const summaries: string[] = [];
  for (const [index, report] of reports.entries()) {
    const markdown = renderRunMarkdown({
      report,
      series: await seriesOf(client, report.run.id),
      commitNote: commitNote(inputs.workflow, report.run.commit),
      noBaselineNote: `runs submitted to a control plane are not compared with a baseline yet (the run is on ${server.url}).`,
      failures: await failureTails(client, report),
    });
    log.closeFence();
    reportFailures(log, report);
    const checkRunId = checkRuns[index];
    if (checks && checkRunId) {
      await checks.complete(checkRunId, {
        status: report.run.status,
        title: checkRunTitle(report),
        summary: markdown,
        annotations: report.annotations,
      });
    }
    summaries.push(markdown);
  }
  const summary = groupId ? renderSweepMarkdown(groupId, reports, summaries) : (summaries[0] ?? '');
  return actionResult(reports, groupId, summary);
}

/** The commit the workspace holds (a pull request's merge commit) and how runners fetch it. */
async function submissionSource(repoRoot: string): Promise<{ commit: string; origin: OriginRepository }> {
  const git = simpleGit({ baseDir: repoRoot });
  const commit = (await git.revparse(['HEAD'])).trim();
  const remoteUrl = (await git.remote(['get-url', 'origin']).catch(() => '')) || '';
  if (!remoteUrl.trim()) {
    throw new Error(
      'Input \'server\': the workspace has no remote "origin" for runners to fetch from; check the repository out with actions/checkout first',
    );
  }
  try {
    return { commit, origin: originRepository(remoteUrl.trim(), repoRoot) };
  } catch (error) {
    if (error instanceof UsageError) throw new Error(`Input 'server': ${error.message}`, { cause: error });
    throw error;
  }
}

/** Refuses a server that does not answer before anything is submitted to it. */
async function checkServerAnswers(client: ApiClient, url: string): Promise<void> {
  try {
    await client.request('GET', '/healthz', z.unknown());
  } catch (error) {
    const why = error instanceof ApiRequestError ? `it answered ${error.message}` : (error as Error).message;
    throw new Error(`Input 'server': ${url} is not a fluksio control plane that answers (${why})`, {
      cause: error,
    });
  }
}

async function submit(client: ApiClient, request: SubmitRunRequest, key: string): Promise<RemoteRunReport> {
  try {
    return await client.request('POST', '/api/v1/runs', RemoteRunReport, {
      body: request,
      headers: { 'idempotency-key': key },
    });
  } catch (error) {
    if (error instanceof ApiRequestError && (error.status === 401 || error.status === 403)) {
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
 * queues new runs), the job and step (two steps never share runs), and what is submitted.
 */
function submissionId(workflow: WorkflowContext, submitted: unknown): string {
  const digest = digestOf({
    repository: workflow.repository,
    job: workflow.job,
    step: workflow.step,
    submitted,
  });
  return `gha-${workflow.runId || 'local'}-${workflow.runAttempt}-${digest.slice(0, 16)}`;
}

async function seriesOf(client: ApiClient, runId: string): Promise<SeriesByMetric> {
  return client
    .request('GET', `/api/v1/runs/${runId}/metrics`, SeriesReply)
    .then((reply) => reply.series)
    .catch(() => ({}));
}

/** The end of each failed stage's log, read from the control plane. */
async function failureTails(
  client: ApiClient,
  report: RemoteRunReport,
): Promise<{ stage: string; tail: string; traceback: null }[]> {
  const failed = report.stages.filter((stage) => stage.status === 'failed' || stage.status === 'timed_out');
  return Promise.all(
    failed.map(async (stage) => {
      const lines = await client
        .request('GET', `/api/v1/runs/${report.run.id}/logs/${encodeURIComponent(stage.name)}`, LogReply)
        .then((reply) => reply.lines)
        .catch((): string[] => []);
      return { stage: stage.name, tail: lines.slice(-TAIL_LINES).join('\n'), traceback: null };
    }),
  );
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

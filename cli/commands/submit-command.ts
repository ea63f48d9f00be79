import pc from 'picocolors';
import { newId } from '../../core/new-id.js';
import { digestOf } from '../../core/canonical-json.js';
import { parseAssignmentArgs } from '../../core/params/param-assignments.js';
import { resolveParams } from '../../core/params/resolve-params.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { locateProject, readProjectPipeline } from '../../local/locate-project.js';
import { originRepository, pushedHead } from '../../client/origin-repository.js';
import { serverConnection, submitterClient } from '../../client/server-connection.js';
import { followRun, newFollowState } from '../../client/follow-run.js';
import { BASELINE_COMMITS_MAX } from '../../schemas/protocol/submit-run.js';
import { firstParentCommits } from '../../runner/workspace/first-parent-commits.js';
import { outputWidth } from '../render/output-width.js';
import { renderSweepTable } from '../render/sweep-table.js';
import { submitRunRequest } from '../../client/submit-run-request.js';
import { currentBranch } from '../../runner/workspace/current-branch.js';
import { problemsError } from '../../present/terminal/usage-error.js';
import { cancelRunsOnInterrupt } from '../remote/cancel-runs-on-interrupt.js';

export interface SubmitCommandOptions {
  cache: boolean;
  wait?: boolean;
  json?: boolean;
  pipeline?: string;
  url?: string;
}

/**
 * `fluksio submit [k=v ...]`: queues this repository's pushed HEAD on the control plane
 * (one run, or a sweep's grid), checking the pipeline and params here first, and with
 * --wait follows the runs to the end. Every run carries an Idempotency-Key, so a retried
 * request never queues it twice.
 */
export async function submitCommand(
  args: string[],
  options: SubmitCommandOptions,
  io: CliIo,
): Promise<number> {
  const connection = serverConnection(options.url, io.env);
  const project = await locateProject(options.pipeline, io.cwd);
  const pipeline = await readProjectPipeline(project);
  const parsed = parseAssignmentArgs(args);
  const resolved = resolveParams(pipeline.params, parsed.assignments);
  const problems = [...parsed.problems, ...resolved.problems];
  if (problems.length > 0) throw problemsError(problems);
  const head = await pushedHead(project.workspace.repoRoot);
  const origin = originRepository(head.remoteUrl, project.workspace.repoRoot);
  const colors = pc.createColors(Boolean(io.stdout.isTTY) && !io.env.NO_COLOR);
  const say = (text: string) => (options.json ? io.stderr : io.stdout).write(text);
  if (head.dirty)
    say(colors.yellow(`Uncommitted changes are not submitted: runs use ${head.commit.slice(0, 12)}\n`));

  const client = submitterClient(connection);
  // Where the runs' baselines may be: this clone's history, which the control plane lacks.
  const baselineCommits = await firstParentCommits(
    project.workspace.repoRoot,
    head.commit,
    BASELINE_COMMITS_MAX,
  ).catch(() => [head.commit]);
  // The branch checked out, so the runs list by it (`fluksio diff --remote <branch>`); none when detached.
  const branch = await currentBranch(project.workspace.repoRoot);
  const submission = newId();
  const group = resolved.grid.length > 1 ? submission : null;
  const runIds: string[] = [];
  // With --wait, Ctrl-C cancels the runs: every request at once, the moment it comes.
  const cancels = options.wait ? cancelRunsOnInterrupt(client, io, say) : null;
  for (const [index, params] of resolved.grid.entries()) {
    if (cancels && io.signal?.aborted) break;
    const request = submitRunRequest({
      origin,
      commit: head.commit,
      pipelinePath: project.pipelinePath,
      pipeline,
      params,
      noCache: !options.cache,
      group: group ? { id: group, index } : null,
      branch,
    });
    const report = await client.submitRun(
      { ...request, baselineCommits },
      `submit:${submission}:${index}:${digestOf(params).slice(0, 16)}`,
    );
    runIds.push(report.run.id);
    cancels?.add(report.run.id);
    say(
      `${colors.bold('queued')} ${report.run.id}  ${report.repository}@${head.commit.slice(0, 10)}  ${report.run.reason ?? ''}\n`,
    );
  }
  if (!cancels) {
    if (options.json) {
      const ids = runIds.map((id) => ({ id }));
      io.stdout.write(`${JSON.stringify(group ? { group, runs: ids } : ids[0], null, 2)}\n`);
    }
    return 0;
  }
  // On a terminal the running stages' elapsed time is shown, as `fluksio run` shows it.
  const live = Boolean((options.json ? io.stderr : io.stdout).isTTY);
  const follow = { io, colors, quiet: Boolean(options.json), goals: pipeline.metrics, live };
  const shown = runIds.map(() => newFollowState());
  const reports = [];
  for (const [index, runId] of runIds.entries()) {
    const report = await followRun(client, runId, {
      ...follow,
      shown: shown[index],
      ...(io.signal ? { signal: io.signal } : {}),
    });
    if (io.signal?.aborted) break;
    cancels.ended(runId);
    reports.push(report);
  }
  if (io.signal?.aborted) {
    // Ctrl-C: the runs were cancelled on the control plane as it came (cancelRunsOnInterrupt);
    // they are followed to their end once every request is answered. A second Ctrl-C
    // leaves as soon as the requests are answered, and the runs still stop.
    await cancels.settled();
    for (const runId of runIds.slice(reports.length))
      reports.push(await followRun(client, runId, { ...follow, shown: shown[runIds.indexOf(runId)] }));
  }
  if (group && reports.length > 1)
    say(
      `\n${renderSweepTable({ groupId: group, reports, goals: pipeline.metrics, width: outputWidth(options.json ? io.stderr : io.stdout, io.env), colors })}`,
    );
  if (options.json)
    io.stdout.write(`${JSON.stringify(group ? { group, runs: reports } : reports[0], null, 2)}\n`);
  return reports.every((report) => report.run.status === 'succeeded') ? 0 : 1;
}

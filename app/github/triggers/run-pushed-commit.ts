import type { Problem } from '../../../core/problem.js';
import type { GitHubWork } from '../github-work.js';
import { defaultGrid } from './default-grid.js';
import { queueGitHubRuns } from './queue-github-runs.js';
import { raiseNotice } from './raise-notice.js';
import { readPipelineAt } from './read-pipeline-at.js';
import type { RepositoryRef } from '../repository-ref.js';
import { branchSelected } from './branch-selected.js';
import { isDependencyBot } from './dependency-bot.js';

/**
 * A push to a branch (DESIGN §8): runs the pushed commit (`after`) with the params'
 * defaults when the pipeline at that commit lists the branch under `on.push.branches`
 * (globs as in GitHub Actions: `release/*`). A repository without `fluksio.yml` (nor
 * `dvc.yaml`) gets nothing; a broken one gets an `action_required` check run naming every
 * problem. A `dvc.yaml` declares no triggers, so a DVC project runs only on command. A
 * dependency bot's push (Dependabot's) runs nothing: its pull request is approved first.
 */
export async function runPushedCommit(
  work: GitHubWork,
  push: {
    deliveryId: string;
    installationId: number;
    repository: RepositoryRef;
    branch: string;
    commit: string;
    pusher: string;
  },
): Promise<void> {
  // Its branch's pull request waits for a maintainer's approval (run-pull-request-head.ts);
  // on.push with a glob that matches the bot's branches must not run it around that.
  if (isDependencyBot(push.pusher)) {
    work.logger.info(
      { deliveryId: push.deliveryId, pusher: push.pusher, branch: push.branch, commit: push.commit },
      "a dependency bot's push is not run automatically: its pull request asks for approval",
    );
    return;
  }
  const api = await work.installationApi(push.installationId);
  const read = await readPipelineAt(api, push.repository, push.commit);
  if (read.state === 'absent') return;
  const { path } = read;
  const brokenPipeline = (problems: Problem[]) =>
    raiseNotice(work, {
      installationId: push.installationId,
      repository: push.repository.fullName,
      headSha: push.commit,
      body: { kind: 'broken-pipeline', problems, path, sha: push.commit },
    });
  if (read.state === 'broken') {
    await brokenPipeline(read.problems);
    return;
  }
  const branches = read.pipeline.on.push?.branches ?? [];
  if (!branchSelected(push.branch, branches)) return;
  const { grid, problems } = defaultGrid(read.pipeline);
  if (problems.length > 0) {
    await brokenPipeline(problems);
    return;
  }
  await queueGitHubRuns(work, {
    deliveryId: push.deliveryId,
    installationId: push.installationId,
    repository: push.repository,
    commit: push.commit,
    pipelinePath: path,
    pipeline: read.pipeline,
    grid,
    swept: [],
    noCache: false,
    trigger: 'push',
    automatic: true,
    pullRequest: null,
    branch: push.branch,
    requestedBy: push.pusher,
  });
}

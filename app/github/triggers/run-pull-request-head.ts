import type { Problem } from '../../../core/problem.js';
import { cancelSupersededRuns } from './cancel-superseded-runs.js';
import { defaultGrid } from './default-grid.js';
import type { GitHubWork } from '../github-work.js';
import { isFork } from './is-fork.js';
import { listPullRequestRuns } from '../../../store/runs/list-pull-request-runs.js';
import { queueGitHubRuns } from './queue-github-runs.js';
import { raiseNotice } from './raise-notice.js';
import { readPullRequest } from './read-pull-request.js';
import { readPipelineAt } from './read-pipeline-at.js';
import type { RepositoryRef } from '../repository-ref.js';
import type { PullRequest } from '../webhook-payloads.js';

/**
 * A pull request opened, pushed to (synchronize) or reopened (DESIGN §8), acted on only
 * while its head is still the event's (asked through the API). Its automatic runs of
 * older heads are cancelled first. Then, when the pipeline at the new head sets
 * `on.pull_request`, the head runs with the params' defaults — unless the pull request
 * comes from a fork, or the event from a bot (Dependabot): that never runs automatically
 * and gets an `action_required` check run printing the exact `/fluksio run --sha <head>` a
 * maintainer must comment. A broken
 * pipeline file (`fluksio.yml`, or `dvc.yaml` where there is none) gets an `action_required`
 * check run naming every problem. The events of one pull request are handled one at a time
 * across every control plane process, and a head with an automatic run queued or running
 * already gets no second one.
 */
export async function runPullRequestHead(
  work: GitHubWork,
  event: {
    deliveryId: string;
    installationId: number;
    repository: RepositoryRef;
    pullRequest: PullRequest;
    sender: string;
    /**
     * The bot whose head this is (Dependabot opening or pushing to its pull request, or its
     * pull request reopened by anyone); null for a head a person pushed.
     */
    bot: string | null;
  },
): Promise<void> {
  const { pullRequest, repository } = event;
  // Two events of one pull request handled at once (GitHub sends a push's synchronize
  // twice, or two replicas' workers take an opened and a synchronize) would each see no
  // run of the head and queue one, or cancel each other's: on every process of the
  // control plane, they take turns, and each reads the head while it holds the turn.
  await work.lock.hold(`pull-request:${repository.fullName}#${pullRequest.number}`, () =>
    actOnCurrentHead(work, event),
  );
}

async function actOnCurrentHead(
  work: GitHubWork,
  event: Parameters<typeof runPullRequestHead>[1],
): Promise<void> {
  const { pullRequest, repository, installationId } = event;
  const head = pullRequest.head.sha;
  const api = await work.installationApi(installationId);
  // An event handled late (retried, or overtaken by the next push's) must not cancel the
  // newer head's runs nor queue its own stale head: only the current head is acted on.
  const current = await readPullRequest(api, repository, pullRequest.number);
  if (current.head.sha !== head) {
    work.logger.info(
      { deliveryId: event.deliveryId, prNumber: pullRequest.number, head, currentHead: current.head.sha },
      'pull request event for a head it has moved on from: nothing to do',
    );
    return;
  }
  await cancelSupersededRuns(work, { repository: repository.fullName, prNumber: pullRequest.number, head });
  const running = await listPullRequestRuns({
    db: work.db,
    repository: repository.fullName,
    prNumber: pullRequest.number,
    automaticOnly: true,
    commit: head,
  });
  // A retried delivery goes on to complete its own runs (queueGitHubRuns is idempotent).
  const ownKey = `delivery:${event.deliveryId}:`;
  const others = running.filter((run) => !run.triggerKey?.startsWith(ownKey));
  if (others.length > 0) {
    work.logger.info(
      {
        deliveryId: event.deliveryId,
        prNumber: pullRequest.number,
        head,
        runIds: others.map((run) => run.id),
      },
      'an automatic run of this head is queued or running already: nothing to do',
    );
    return;
  }

  const read = await readPipelineAt(api, repository, head);
  if (read.state === 'absent') return;
  const { path } = read;
  const brokenPipeline = (problems: Problem[]) =>
    raiseNotice(work, {
      installationId,
      repository: repository.fullName,
      headSha: head,
      body: { kind: 'broken-pipeline', problems, path, sha: head },
    });
  if (read.state === 'broken') {
    await brokenPipeline(read.problems);
    return;
  }
  if (read.pipeline.on.pull_request === undefined) return;
  const fork = isFork(pullRequest);
  // A head a bot pushed (a dependency update: whatever the new versions' install scripts
  // do) is nobody's approval either, though it is on a branch of the repository: it runs
  // with the runners' secrets, and into the trusted cache, only once a maintainer says so.
  if (fork || event.bot !== null) {
    await raiseNotice(work, {
      installationId,
      repository: repository.fullName,
      headSha: head,
      body: {
        kind: 'approval',
        headSha: head,
        prNumber: pullRequest.number,
        ...(fork || event.bot === null ? {} : { pushedBy: event.bot }),
      },
    });
    return;
  }
  const { grid, problems } = defaultGrid(read.pipeline);
  if (problems.length > 0) {
    await brokenPipeline(problems);
    return;
  }
  await queueGitHubRuns(work, {
    deliveryId: event.deliveryId,
    installationId,
    repository,
    commit: head,
    pipelinePath: path,
    pipeline: read.pipeline,
    grid,
    swept: [],
    noCache: false,
    trigger: 'pull_request',
    automatic: true,
    pullRequest: { number: pullRequest.number, baseRef: pullRequest.base.ref, fork: false },
    branch: pullRequest.head.ref,
    requestedBy: event.sender,
  });
}

import { parseCommentCommand } from '../../../core/params/comment-command.js';
import type { DeliveryRow } from '../../../schemas/tables/deliveries.js';
import { findRepositoryRun } from '../../../store/runs/find-repository-run.js';
import { listCheckSuiteRuns } from '../../../store/runs/list-check-suite-runs.js';
import { removeInstallation } from '../../../store/installations/remove-installation.js';
import { saveInstallation } from '../../../store/installations/save-installation.js';
import { ownerRefusal } from './owner-refusal.js';
import { answerCommentCommand } from '../triggers/answer-comment-command.js';
import type { GitHubWork } from '../github-work.js';
import { repositoryRef } from '../repository-ref.js';
import { rerunRuns } from '../triggers/rerun-runs.js';
import { runPullRequestHead } from '../triggers/run-pull-request-head.js';
import { runPushedCommit } from '../triggers/run-pushed-commit.js';
import {
  CheckRunPayload,
  CheckSuitePayload,
  InstallationPayload,
  isBotAccount,
  IssueCommentPayload,
  OwnedPayload,
  PullRequestPayload,
  PushPayload,
  readPayload,
} from '../webhook-payloads.js';

/** The events fluksio subscribes to (app.yml); deliveries of any other are not stored. */
export const SUBSCRIBED_EVENTS: ReadonlySet<string> = new Set([
  'push',
  'pull_request',
  'issue_comment',
  'check_run',
  'check_suite',
  'installation',
  'installation_repositories',
]);

const PULL_REQUEST_ACTIONS = new Set(['opened', 'synchronize', 'reopened']);
const RERUN_ACTIONS: Readonly<Record<string, boolean | 'as-before'>> = {
  rerun: 'as-before',
  'rerun-no-cache': true,
};
const ZERO_SHA = /^0+$/;

/**
 * What a stored delivery asks for, done (DESIGN §8). Each event's handler only reads the
 * payload, checks whether it concerns fluksio (who, which action) and calls the one
 * function that does the work. Installations of owners not allowed get nothing at all;
 * bots and edited comments are ignored. A payload lacking a field it needs throws
 * UnreadablePayloadError.
 */
export async function dispatchDelivery(work: GitHubWork, delivery: DeliveryRow): Promise<void> {
  const { event, payload } = delivery;
  const deliveryId = delivery.id;
  if (event === 'installation' || event === 'installation_repositories') {
    const { action, installation } = readPayload(InstallationPayload, event, payload);
    if (action === 'deleted') {
      await removeInstallation({ db: work.db, installationId: installation.id });
      return;
    }
    await saveInstallation({
      db: work.db,
      installation: {
        id: installation.id,
        owner: installation.account?.login ?? '',
        suspended: action === 'suspend' || (action !== 'unsuspend' && Boolean(installation.suspended_at)),
      },
    });
    return;
  }
  if (!SUBSCRIBED_EVENTS.has(event)) return;
  const owner = readPayload(OwnedPayload, event, payload).repository.owner;
  const refusal = ownerRefusal(owner, work.github.allowedOwners, work.github.pinnedOwners);
  if (refusal !== null) {
    work.logger.info(
      { deliveryId, event, owner: owner.login, ownerId: owner.id, why: refusal },
      'delivery ignored: the owner is not allowed',
    );
    return;
  }

  switch (event) {
    case 'push': {
      const push = readPayload(PushPayload, event, payload);
      if (push.deleted || ZERO_SHA.test(push.after) || !push.ref.startsWith('refs/heads/')) return;
      return runPushedCommit(work, {
        deliveryId,
        installationId: push.installation.id,
        repository: repositoryRef(push.repository),
        branch: push.ref.slice('refs/heads/'.length),
        commit: push.after,
        pusher: push.sender.login,
      });
    }
    case 'pull_request': {
      const pr = readPayload(PullRequestPayload, event, payload);
      if (!PULL_REQUEST_ACTIONS.has(pr.action)) return;
      return runPullRequestHead(work, {
        deliveryId,
        installationId: pr.installation.id,
        repository: repositoryRef(pr.repository),
        pullRequest: pr.pull_request,
        sender: pr.sender.login,
        // As GitHub Actions treats Dependabot's: a bot's proposal is nobody's approval. A
        // person reopening a bot's pull request pushes nothing: its head is still the bot's.
        bot: isBotAccount(pr.sender)
          ? pr.sender.login
          : pr.action === 'reopened' && pr.pull_request.user && isBotAccount(pr.pull_request.user)
            ? pr.pull_request.user.login
            : null,
      });
    }
    case 'issue_comment': {
      const comment = readPayload(IssueCommentPayload, event, payload);
      if (comment.action !== 'created' || !comment.issue.pull_request) return;
      // Bots are ignored, even ones whose payload leaves out the type (`name[bot]` logins).
      if (isBotAccount(comment.comment.user)) return;
      const command = parseCommentCommand(comment.comment.body ?? '');
      if (command === null) return;
      return answerCommentCommand(work, {
        deliveryId,
        retried: delivery.attempts > 1,
        installationId: comment.installation.id,
        repository: repositoryRef(comment.repository),
        prNumber: comment.issue.number,
        commentId: comment.comment.id,
        commenter: comment.comment.user.login,
        command,
      });
    }
    case 'check_run': {
      const check = readPayload(CheckRunPayload, event, payload);
      const noCache =
        check.action === 'rerequested'
          ? 'as-before'
          : check.action === 'requested_action'
            ? RERUN_ACTIONS[check.requested_action?.identifier ?? '']
            : undefined;
      if (noCache === undefined || !check.check_run.external_id) return;
      const repository = repositoryRef(check.repository);
      const run = await findRepositoryRun({
        db: work.db,
        repository: repository.fullName,
        runId: check.check_run.external_id,
      });
      // A notice's check run (approval needed, broken pipeline) has no run to repeat.
      if (!run || run.installationId === null) return;
      await rerunRuns(work, {
        deliveryId,
        installationId: check.installation.id,
        repository,
        sender: check.sender.login,
        runs: [run],
        noCache,
      });
      return;
    }
    case 'check_suite': {
      const suite = readPayload(CheckSuitePayload, event, payload);
      if (suite.action !== 'rerequested') return;
      const repository = repositoryRef(suite.repository);
      const runs = await listCheckSuiteRuns({
        db: work.db,
        repository: repository.fullName,
        headSha: suite.check_suite.head_sha,
        exceptDelivery: deliveryId,
      });
      await rerunRuns(work, {
        deliveryId,
        installationId: suite.installation.id,
        repository,
        sender: suite.sender.login,
        runs,
        noCache: 'as-before',
      });
      return;
    }
  }
}

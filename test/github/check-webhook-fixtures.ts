import {
  checkSuiteId,
  DEFAULT_ACTOR,
  renderMinimalPullRequest,
  type FixtureRepository,
  type PullRequestInit,
} from './github-shapes.js';
import {
  retargetPayload,
  toDelivery,
  webhookExample,
  type CommonOptions,
  type Payload,
  type WebhookDelivery,
} from './webhook-fixture-base.js';

let nextCheckRunId = 6_000_000_000;

/** Rewrites a check suite object (in check_run and check_suite payloads) for this commit. */
function checkSuite(
  template: Payload,
  repo: FixtureRepository,
  options: {
    id: number;
    headSha: string;
    headBranch: string | null;
    pullRequests: PullRequestInit[];
    appId?: number;
  },
): Payload {
  const apiUrl = `https://api.github.com/repos/${repo.owner}/${repo.name}`;
  return {
    ...template,
    id: options.id,
    node_id: `CS_${options.id}`,
    head_sha: options.headSha,
    head_branch: options.headBranch,
    after: options.headSha,
    url: `${apiUrl}/check-suites/${options.id}`,
    check_runs_url: `${apiUrl}/check-suites/${options.id}/check-runs`,
    pull_requests: options.pullRequests.map((pullRequest) => renderMinimalPullRequest(pullRequest, repo)),
    ...(options.appId !== undefined && { app: { ...(template.app as Payload), id: options.appId } }),
    ...(template.head_commit !== undefined && {
      head_commit: { ...(template.head_commit as Payload), id: options.headSha, tree_id: options.headSha },
    }),
  };
}

/** Check-run and check-suite options. */
interface CheckOptions extends CommonOptions {
  headSha: string;
  /** Pull requests (in the same repository) whose head is `headSha`. @defaultValue none */
  pullRequests?: PullRequestInit[];
  /** The app the check belongs to. @defaultValue the example's */
  appId?: number;
}

/** A `check_run` event: a re-run request or a button (`identifier`) pressed on fluksio's check run. */
export function checkRunPayload(
  options: CheckOptions & {
    action: 'rerequested' | 'requested_action' | 'created' | 'completed';
    /** The button's identifier; required for `requested_action`. */
    identifier?: string;
    externalId: string;
    /** @defaultValue a fresh id */
    checkRunId?: number;
    /** @defaultValue `'fluksio'` */
    name?: string;
    headBranch?: string;
  },
): WebhookDelivery<'check_run'> {
  const { repo, action, headSha } = options;
  if (action === 'requested_action' && options.identifier === undefined) {
    throw new Error('checkRunPayload: a requested_action needs the identifier of the button pressed');
  }
  const sender = options.sender ?? DEFAULT_ACTOR;
  const base = webhookExample(
    'check_run',
    (payload) => payload.action === (action === 'requested_action' ? action : 'rerequested'),
  );
  const payload = retargetPayload(base, repo, options.installationId, sender);
  const template = payload.check_run as Payload;
  const id = options.checkRunId ?? nextCheckRunId++;
  const apiUrl = `https://api.github.com/repos/${repo.owner}/${repo.name}`;
  const pullRequests = options.pullRequests ?? [];
  return toDelivery('check_run', {
    ...payload,
    action,
    ...(action === 'requested_action' && { requested_action: { identifier: options.identifier } }),
    check_run: {
      ...template,
      id,
      node_id: `CR_${id}`,
      name: options.name ?? 'fluksio',
      head_sha: headSha,
      external_id: options.externalId,
      url: `${apiUrl}/check-runs/${id}`,
      html_url: `https://github.com/${repo.owner}/${repo.name}/runs/${id}`,
      status: 'completed',
      conclusion: action === 'requested_action' ? 'failure' : 'success',
      ...(options.appId !== undefined && { app: { ...(template.app as Payload), id: options.appId } }),
      check_suite: checkSuite(template.check_suite as Payload, repo, {
        id: checkSuiteId(headSha),
        headSha,
        headBranch: options.headBranch ?? null,
        pullRequests,
        appId: options.appId,
      }),
      pull_requests: pullRequests.map((pullRequest) => renderMinimalPullRequest(pullRequest, repo)),
    },
  });
}

/** A `check_suite` event (fluksio acts on `rerequested`). */
export function checkSuitePayload(
  options: CheckOptions & {
    action: 'rerequested' | 'requested' | 'completed';
    /** @defaultValue `repo.defaultBranch` */
    headBranch?: string;
    /** @defaultValue derived from `headSha` */
    checkSuiteId?: number;
  },
): WebhookDelivery<'check_suite'> {
  const { repo, action, headSha } = options;
  const base = webhookExample(
    'check_suite',
    (payload) => payload.action === action && payload.installation !== undefined,
  );
  const payload = retargetPayload(base, repo, options.installationId, options.sender ?? DEFAULT_ACTOR);
  return toDelivery('check_suite', {
    ...payload,
    action,
    check_suite: checkSuite(payload.check_suite as Payload, repo, {
      id: options.checkSuiteId ?? checkSuiteId(headSha),
      headSha,
      headBranch: options.headBranch ?? repo.defaultBranch ?? 'main',
      pullRequests: options.pullRequests ?? [],
      appId: options.appId,
    }),
  });
}

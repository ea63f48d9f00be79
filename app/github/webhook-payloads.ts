import { z } from 'zod';
import { formatPath } from '../../core/problem.js';
import { CommitSha } from '../../schemas/protocol/commit-sha.js';
import { RepositoryName } from '../../schemas/protocol/repository-name.js';
import { UnreadablePayloadError } from './intake/unreadable-payload-error.js';

/*
 * The fields of GitHub's webhook payloads that fluksio reads, and only those: objects are
 * not strict, since GitHub adds fields at will. Ids beyond 32 bits are plain numbers
 * (safe up to 2^53).
 */

export const Account = z.object({
  login: z.string().min(1),
  /** GitHub's account id: what a pinned allowed owner is matched by. */
  id: z.number().int().optional(),
  type: z.string().optional(),
});

export const WebhookRepository = z.object({
  id: z.number().int(),
  name: z.string().min(1),
  full_name: RepositoryName,
  owner: Account,
  /** https URL git clones; on GitHub Enterprise it names the enterprise host. */
  clone_url: z.url().optional(),
});
export type WebhookRepository = z.infer<typeof WebhookRepository>;

const Installation = z.object({ id: z.number().int().positive() });

/** What every event about one repository carries: the repository, the installation, the sender. */
const RepositoryEvent = z.object({
  repository: WebhookRepository,
  installation: Installation,
  sender: Account,
});
/** A repository event with an `action` (all but push). */
const RepositoryAction = RepositoryEvent.extend({ action: z.string() });

export const PushPayload = RepositoryEvent.extend({
  ref: z.string(),
  after: z.string(),
  deleted: z.boolean().optional(),
});
export type PushPayload = z.infer<typeof PushPayload>;

export const PullRequest = z.object({
  number: z.number().int().positive(),
  head: z.object({
    sha: CommitSha,
    ref: z.string(),
    /** Null when the fork's repository was deleted. */
    repo: z.object({ id: z.number().int() }).nullable(),
  }),
  base: z.object({ ref: z.string(), repo: z.object({ id: z.number().int() }) }),
  /** Who opened it: a bot's (Dependabot's) is approved as a fork's is. */
  user: Account.nullable().optional(),
});
export type PullRequest = z.infer<typeof PullRequest>;

/** Whether an account is a bot's, even where the payload leaves out the type (`name[bot]` logins). */
export function isBotAccount(account: z.infer<typeof Account>): boolean {
  return account.type === 'Bot' || account.login.endsWith('[bot]');
}

export const PullRequestPayload = RepositoryAction.extend({ pull_request: PullRequest });
export type PullRequestPayload = z.infer<typeof PullRequestPayload>;

export const IssueCommentPayload = RepositoryAction.extend({
  issue: z.object({
    number: z.number().int().positive(),
    /** Present when the issue is a pull request. */
    pull_request: z.object({}).optional().nullable(),
  }),
  comment: z.object({ id: z.number().int(), body: z.string().nullable(), user: Account }),
});
export type IssueCommentPayload = z.infer<typeof IssueCommentPayload>;

export const CheckRunPayload = RepositoryAction.extend({
  check_run: z.object({
    id: z.number().int(),
    external_id: z.string().nullable().optional(),
    head_sha: z.string(),
  }),
  requested_action: z.object({ identifier: z.string() }).optional().nullable(),
});
export type CheckRunPayload = z.infer<typeof CheckRunPayload>;

export const CheckSuitePayload = RepositoryAction.extend({
  check_suite: z.object({ id: z.number().int(), head_sha: CommitSha }),
});
export type CheckSuitePayload = z.infer<typeof CheckSuitePayload>;

export const InstallationPayload = z.object({
  action: z.string(),
  installation: z.object({
    id: z.number().int().positive(),
    account: Account.nullable().optional(),
    suspended_at: z.string().nullable().optional(),
  }),
});
export type InstallationPayload = z.infer<typeof InstallationPayload>;

/** Just enough of any payload to tell whose repository it is about. */
export const OwnedPayload = z.object({ repository: z.object({ owner: Account }) });

/**
 * The payload as `schema` reads it, or UnreadablePayloadError naming every field at
 * fault (`pull_request.head.sha: expected a full commit SHA …`).
 */
export function readPayload<Schema extends z.ZodType>(
  schema: Schema,
  event: string,
  payload: unknown,
): z.output<Schema> {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  throw new UnreadablePayloadError(
    event,
    parsed.error.issues.map((issue) => {
      const path = formatPath(issue.path) || 'payload';
      const missing = issue.code === 'invalid_type' && / received undefined$/.test(issue.message);
      return `${path}: ${missing ? 'is missing' : issue.message.replace(/^Invalid input: /, '')}`;
    }),
  );
}

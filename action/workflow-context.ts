import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** The pull request a workflow runs for, as its event payload describes it. */
export interface PullRequestContext {
  number: number;
  /** The head commit: where the check run goes, so that it shows on the pull request. */
  headSha: string;
  /** The base branch's commit when the event happened. */
  baseSha: string;
  /** The base branch's name (`main`). */
  baseRef: string;
}

/**
 * The workflow run this step is part of, read from the variables GitHub Actions sets
 * (https://docs.github.com/actions/reference/variables-reference) and the event file.
 */
export interface WorkflowContext {
  /** `GITHUB_WORKSPACE`: the job's checkout, where pipelines are found. @defaultValue the current directory */
  workspace: string;
  /** `GITHUB_REPOSITORY`: `owner/name`. */
  repository: string;
  /** `GITHUB_EVENT_NAME`: `push`, `pull_request`… */
  eventName: string;
  /** `GITHUB_SHA`: the commit the event names (for a pull request, GitHub's merge commit). */
  sha: string;
  /**
   * The branch the run is of, for the run lists' filter: a pull request's head branch
   * (`GITHUB_HEAD_REF`), else the pushed branch (`GITHUB_REF_NAME` when `GITHUB_REF_TYPE`
   * is `branch`); null for a tag or an event of no branch.
   */
  branch: string | null;
  /** The pull request of a `pull_request` or `pull_request_target` event, else null. */
  pullRequest: PullRequestContext | null;
  /** `GITHUB_RUN_ID` and `GITHUB_RUN_ATTEMPT`: name this attempt of the workflow run. */
  runId: string;
  runAttempt: string;
  /**
   * `GITHUB_JOB` and `GITHUB_ACTION`: the job and the step. The same in every leg of a
   * matrix job, so a submission's Idempotency-Key adds a nonce of the step's execution.
   */
  job: string;
  step: string;
  /** `GITHUB_API_URL`. @defaultValue https://api.github.com */
  apiUrl: string;
  /** `GITHUB_SERVER_URL`. @defaultValue https://github.com */
  serverUrl: string;
}

const PullRequestEvent = z.object({
  pull_request: z.object({
    number: z.number().int().positive(),
    head: z.object({ sha: z.string().regex(/^[0-9a-f]{40,64}$/) }),
    base: z.object({ sha: z.string().regex(/^[0-9a-f]{40,64}$/), ref: z.string().min(1) }),
  }),
});

/**
 * Reads the workflow context from `env` (process.env at the edge). A missing event file
 * or one that is not a pull request's leaves `pullRequest` null: the step still runs,
 * its check run goes on `GITHUB_SHA`.
 */
export function readWorkflowContext(env: Readonly<Record<string, string | undefined>>): WorkflowContext {
  const eventName = env.GITHUB_EVENT_NAME ?? '';
  let pullRequest: PullRequestContext | null = null;
  if ((eventName === 'pull_request' || eventName === 'pull_request_target') && env.GITHUB_EVENT_PATH) {
    const parsed = PullRequestEvent.safeParse(readJson(env.GITHUB_EVENT_PATH));
    if (parsed.success) {
      const { number, head, base } = parsed.data.pull_request;
      pullRequest = { number, headSha: head.sha, baseSha: base.sha, baseRef: base.ref };
    }
  }
  return {
    workspace: env.GITHUB_WORKSPACE || process.cwd(),
    repository: env.GITHUB_REPOSITORY ?? '',
    eventName,
    sha: env.GITHUB_SHA ?? '',
    branch: env.GITHUB_HEAD_REF || (env.GITHUB_REF_TYPE === 'branch' ? env.GITHUB_REF_NAME || null : null),
    pullRequest,
    runId: env.GITHUB_RUN_ID ?? '',
    runAttempt: env.GITHUB_RUN_ATTEMPT ?? '1',
    job: env.GITHUB_JOB ?? '',
    step: env.GITHUB_ACTION ?? '',
    apiUrl: (env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, ''),
    serverUrl: (env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, ''),
  };
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

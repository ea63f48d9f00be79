import { Octokit } from '@octokit/rest';
import { annotationPages, type GitHubAnnotation } from '../present/github/github-annotation.js';
import type { RunConclusion } from '../core/check-run-conclusion.js';
import type { WorkflowLog } from './workflow-log.js';
import { messageOf } from '../core/text/message-of.js';

/** Where the action's check runs go. */
export interface CheckRunTarget {
  owner: string;
  repo: string;
  /** The pull request's head (so the check shows on it), else the pushed commit. */
  headSha: string;
  /** The workflow run's page. */
  detailsUrl: string;
}

/** A check run's final state, within GitHub's limits (renderCheckRun makes it so). */
export interface CheckRunResult {
  /** The run's (runConclusion); never `neutral`, which would pass a required check. */
  conclusion: RunConclusion;
  title: string;
  summary: string;
  text: string;
  /** All of them: they go 50 per request. */
  annotations: readonly GitHubAnnotation[];
}

/**
 * Publishes runs as check runs through the REST API with the workflow's token. A token
 * without `checks: write` (a fork's pull request, a workflow with read-only permissions)
 * gets a 403: that is one warning in the log, and the step goes on without check runs;
 * results are in the step summary either way.
 */
export class CheckRunPublisher {
  private readonly octokit: Octokit | null;
  private warned = false;

  constructor(
    private readonly options: { token: string; apiUrl: string; target: CheckRunTarget; log: WorkflowLog },
  ) {
    this.octokit = options.token
      ? new Octokit({
          auth: options.token,
          baseUrl: options.apiUrl,
          userAgent: 'fluksio-action',
          log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
        })
      : null;
  }

  /** Creates an in-progress check run named `name`; its id, or null when none could be made. */
  async start(name: string, runId: string): Promise<number | null> {
    if (!this.octokit || this.warned) return null;
    const { owner, repo, headSha, detailsUrl } = this.options.target;
    try {
      const { data } = await this.octokit.rest.checks.create({
        owner,
        repo,
        name,
        head_sha: headSha,
        external_id: runId,
        details_url: detailsUrl,
        status: 'in_progress',
        started_at: new Date().toISOString(),
      });
      return data.id;
    } catch (error) {
      this.warnOnce(error);
      return null;
    }
  }

  /** Completes a check run with its conclusion, output and annotations (50 per request). */
  async complete(checkRunId: number, result: CheckRunResult): Promise<void> {
    if (!this.octokit) return;
    const { owner, repo } = this.options.target;
    const output = {
      title: result.title,
      summary: result.summary,
      ...(result.text ? { text: result.text } : {}),
    };
    const [first = [], ...rest] = annotationPages(result.annotations);
    try {
      await this.octokit.rest.checks.update({
        owner,
        repo,
        check_run_id: checkRunId,
        status: 'completed',
        conclusion: result.conclusion,
        completed_at: new Date().toISOString(),
        output: { ...output, annotations: first },
      });
      // Annotations sent in later updates are added to the earlier ones.
      for (const page of rest) {
        await this.octokit.rest.checks.update({
          owner,
          repo,
          check_run_id: checkRunId,
          output: { ...output, annotations: page },
        });
      }
    } catch (error) {
      this.options.log.annotate('warning', `Could not complete the check run: ${messageOf(error)}`);
    }
  }

  private warnOnce(error: unknown): void {
    if (this.warned) return;
    this.warned = true;
    const status = (error as { status?: number }).status;
    this.options.log.annotate(
      'warning',
      status === 403
        ? `The github-token may not create check runs (${messageOf(error)}): give the job "permissions: checks: write". The results are in the step summary.`
        : `Could not create a check run (${messageOf(error)}); the results are in the step summary.`,
    );
  }
}

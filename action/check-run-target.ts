import type { CheckRunTarget } from './check-run-publisher.js';
import type { WorkflowContext } from './workflow-context.js';

/**
 * Where check runs go: the pull request's head when the workflow runs for one (the run
 * itself executes GitHub's merge commit, which no pull request shows checks for), else
 * `GITHUB_SHA`. Null outside a workflow run.
 */
export function checkRunTargetOf(workflow: WorkflowContext): CheckRunTarget | null {
  const [owner, repo] = workflow.repository.split('/');
  const headSha = workflow.pullRequest?.headSha ?? workflow.sha;
  if (!owner || !repo || !headSha) return null;
  return {
    owner,
    repo,
    headSha,
    detailsUrl: workflowRunUrl(workflow),
  };
}

/** The workflow run's page, where its log is. */
export function workflowRunUrl(workflow: WorkflowContext): string {
  return `${workflow.serverUrl}/${workflow.repository}/actions/runs/${workflow.runId}`;
}

import type { Params } from '../core/params/resolve-params.js';
import { formatParams } from '../core/text/format.js';
import type { CheckRunTarget } from './check-run-publisher.js';
import type { WorkflowContext } from './workflow-context.js';

/**
 * A run's check-run name: the `check-name` input, stable so it can be a required check;
 * a sweep's runs add the params they vary (`fluksio (lr=0.1)`, DESIGN §8).
 */
export function checkRunName(checkName: string, params: Params, swept: readonly string[]): string {
  if (swept.length === 0) return checkName;
  const varied = Object.fromEntries(swept.map((key) => [key, params[key] ?? '']));
  return `${checkName} (${formatParams(varied)})`;
}

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
    detailsUrl: `${workflow.serverUrl}/${workflow.repository}/actions/runs/${workflow.runId}`,
  };
}

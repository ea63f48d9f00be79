import type { RenderedCheckRun } from '../present/github/render-check-run.js';
import { checkRunConclusion, type RunConclusion } from '../schemas/check-run-conclusion.js';
import type { RunStatus } from '../schemas/statuses.js';
import type { CheckRunPublisher, CheckRunResult } from './check-run-publisher.js';

/**
 * The check runs a step created, one per run, until each is completed. One left in
 * progress stays so on the pull request for good — a required check pending forever —
 * so the step completes, in a `finally`, every one it did not complete with its run's
 * result, whatever stopped it: a cancelled workflow, the control plane gone, a bug.
 */
export class OpenCheckRuns {
  /** Each run's check run as it is being created: its id, or null when none could be. */
  private readonly open = new Map<string, Promise<number | null>>();

  constructor(private readonly checks: CheckRunPublisher | null) {}

  /** Creates run `runId`'s check run, in progress; `complete` waits for it. */
  start(name: string, runId: string): void {
    if (this.checks) this.open.set(runId, this.checks.start(name, runId));
  }

  /** Completes run `runId`'s check run with the run's result. */
  async complete(runId: string, result: CheckRunResult): Promise<void> {
    await this.completeWith(runId, () => Promise.resolve(result));
  }

  /**
   * Completes every check run still in progress with what `resultOf` says of its run.
   * Called in a `finally`: `resultOf` must not throw, and a check run that cannot be
   * completed is a warning (CheckRunPublisher), so this never hides the step's error.
   */
  async completeRest(resultOf: (runId: string) => Promise<CheckRunResult>): Promise<void> {
    for (const runId of [...this.open.keys()]) await this.completeWith(runId, () => resultOf(runId));
  }

  private async completeWith(runId: string, resultOf: () => Promise<CheckRunResult>): Promise<void> {
    const created = this.open.get(runId);
    if (!created) return;
    this.open.delete(runId);
    const checkRunId = await created;
    if (this.checks && checkRunId !== null) await this.checks.complete(checkRunId, await resultOf());
  }
}

/**
 * A run's check-run conclusion. One that had not ended when the step stopped reporting
 * on it concludes `cancelled` when the workflow was cancelled, else `failure`: the step
 * does not know how it ends, and `neutral` would pass a required check.
 */
export function runConclusion(status: RunStatus, workflowCancelled: boolean): RunConclusion {
  return checkRunConclusion(status) ?? (workflowCancelled ? 'cancelled' : 'failure');
}

/** The result of a run's check run as renderCheckRun drew it, concluded as runConclusion says. */
export function checkRunResult(
  rendered: RenderedCheckRun,
  status: RunStatus,
  workflowCancelled: boolean,
): CheckRunResult {
  const { title, summary, text, annotations } = rendered;
  return { conclusion: runConclusion(status, workflowCancelled), title, summary, text, annotations };
}

/**
 * The result of a check run whose run had not ended when the step stopped: cancelled with
 * the workflow, or failed with the step. `goesOn` says where the run can still be seen.
 */
export function unfinishedRunResult(
  runId: string,
  workflowCancelled: boolean,
  goesOn: string | null,
): CheckRunResult {
  const why = workflowCancelled
    ? `The workflow was cancelled before run \`${runId}\` ended.`
    : `The step failed before run \`${runId}\` ended; the workflow run's log says why.`;
  return {
    conclusion: workflowCancelled ? 'cancelled' : 'failure',
    title: workflowCancelled ? '🚫 cancelled with the workflow' : '❌ the step failed before the run ended',
    summary: `### fluksio\n\n${why}${goesOn ? ` ${goesOn}` : ''}\n`,
    text: '',
    annotations: [],
  };
}

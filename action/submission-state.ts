import * as core from '@actions/core';

/**
 * What the main step leaves for the post step (`core.saveState`): the runs it submitted,
 * saved as each submission is answered, and whether it ended by itself. The post step
 * cancels the runs of a main step that did not — one killed (a cancelled workflow whose
 * step did not stop in time), or one that failed while cancelling them — never those of
 * a step that succeeded or failed on its own, whose runs go on.
 */
export const SUBMISSION_STATE = {
  /** JSON array of run ids. */
  runs: 'submitted-runs',
  /** `true` once the main step ended by itself, whatever its outcome. */
  settled: 'submission-settled',
} as const;

export function saveSubmittedRuns(runIds: readonly string[]): void {
  core.saveState(SUBMISSION_STATE.runs, JSON.stringify(runIds));
}

export function markSubmissionSettled(): void {
  core.saveState(SUBMISSION_STATE.settled, 'true');
}

/** The runs the main step submitted and left unsettled; empty when there is nothing to cancel. */
export function unsettledSubmittedRuns(): string[] {
  if (core.getState(SUBMISSION_STATE.settled) === 'true') return [];
  try {
    const ids: unknown = JSON.parse(core.getState(SUBMISSION_STATE.runs) || '[]');
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

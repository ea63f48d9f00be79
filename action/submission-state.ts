import * as core from '@actions/core';

/**
 * What the main step leaves for the post step (`core.saveState`): the runs it submitted,
 * saved after each submission, and whether it saw them to the end. The post step cancels
 * the runs of a main step that was killed before that (a cancelled workflow).
 */
export const SUBMISSION_STATE = {
  /** JSON array of run ids. */
  runs: 'submitted-runs',
  /** `true` once the main step no longer needs the runs cancelled for it. */
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

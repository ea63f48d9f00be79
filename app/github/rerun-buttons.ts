import type { CheckRunAction } from '../../present/github/render-check-run.js';

/**
 * The buttons on a completed check run of the app's; GitHub sends
 * `check_run.requested_action` with the identifier, which dispatch-delivery answers.
 */
export const RERUN_BUTTONS: readonly CheckRunAction[] = [
  { label: 'Re-run', description: 'Run this commit again, using the cache', identifier: 'rerun' },
  {
    label: 'Re-run without cache',
    description: 'Run again, executing every stage',
    identifier: 'rerun-no-cache',
  },
];

import { z } from 'zod';
import { CommitSha } from './commit-sha.js';

/** How many commits a report's baseline is looked for among: one page of a first-parent walk. */
export const MAX_BASELINE_COMMITS = 100;

/**
 * The query of `GET /api/v1/runs/:id`. `baseline-commits`: where to look for the run's
 * baseline, nearest first, as full SHAs joined by commas (DESIGN §7) — the caller knows
 * the repository's history (the action has the checkout), the control plane may not.
 * Used only while the run has no baseline fixed and no commits recorded (its submitter's,
 * or the GitHub App's lookup); without any, the report has no baseline and its diff lists
 * the run's own metrics.
 */
export const RunReportQuery = z.object({
  'baseline-commits': z
    .string()
    .transform((list) => list.split(','))
    .pipe(z.array(CommitSha).min(1).max(MAX_BASELINE_COMMITS))
    .optional(),
});
export type RunReportQuery = z.infer<typeof RunReportQuery>;

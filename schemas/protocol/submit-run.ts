import { z } from 'zod';
import { ParamValue } from '../key-inputs.js';
import { BranchName } from './branch-name.js';
import { CommitSha } from './commit-sha.js';
import { RepositoryName } from './repository-name.js';
import { PipelinePath } from './pipeline-path.js';

/** The most commits a submit lists for its baseline: a long first-parent walk. */
export const BASELINE_COMMITS_MAX = 200;

/**
 * `POST /api/v1/runs` with an `Idempotency-Key` header: queue one run of a pushed commit.
 * A sweep is one request per grid point, sharing a group. Params are typed values; the
 * submitter validated them against the pipeline at that commit, and the runner checks
 * again before anything runs.
 */
export const SubmitRunRequest = z.strictObject({
  repository: RepositoryName,
  /** For repositories not on GitHub: `https://` on the allow-list, or `file://` when allowed. */
  cloneUrl: z.string().min(1).max(2000).optional(),
  commit: CommitSha,
  pipelinePath: PipelinePath.default('fluksio.yml'),
  params: z.record(z.string(), ParamValue).default({}),
  labels: z
    .array(z.string().regex(/^[A-Za-z0-9_.-]+$/))
    .max(20)
    .default([]),
  noCache: z.boolean().default(false),
  /** Times an abandoned run is queued again. */
  retries: z.number().int().min(0).max(10).default(0),
  timeoutMs: z
    .number()
    .int()
    .positive()
    .max(7 * 24 * 3_600_000)
    .default(24 * 3_600_000),
  group: z.strictObject({ id: z.string().min(1).max(64), index: z.number().int().min(0).max(31) }).optional(),
  /**
   * Where the run's baseline may be, nearest first: `commit` and its first-parent
   * ancestors as the submitter's clone knows them. Absent: the run's commit alone.
   */
  baselineCommits: z.array(CommitSha).max(BASELINE_COMMITS_MAX).optional(),
  /** The branch the commit is of (`main`), for the run lists' branch filter; a git ref name. */
  branch: BranchName.optional(),
});
export type SubmitRunRequest = z.infer<typeof SubmitRunRequest>;

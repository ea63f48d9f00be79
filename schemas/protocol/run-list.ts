import { z } from 'zod';
import { ParamValue } from '../key-inputs.js';
import { StageSelection } from '../stage-selection.js';
import { RunStatus } from '../statuses.js';
import { BranchName } from './branch-name.js';
import { CommitSha } from './commit-sha.js';
import { PipelinePath } from './pipeline-path.js';

/** The most runs one `GET /api/v1/runs` answers. */
export const RUN_LIST_MAX = 200;

/** The most commits one `GET /api/v1/runs?commit=` names: one page of a first-parent walk. */
export const RUN_LIST_COMMITS_MAX = 100;

/** `GET /api/v1/runs?repository=&pipeline=&prefix=&commit=&branch=&status=&limit=`: which runs to list. */
export const RunListQuery = z.strictObject({
  /** Only this repository's runs (one the token reaches); default: every one it reaches. */
  repository: z.string().min(1).max(300).optional(),
  /** Only runs of this pipeline file (`fluksio.yml`, `ml/dvc.yaml`): a repository may hold several. */
  pipeline: PipelinePath.optional(),
  /** Only runs whose id starts with this (any case): a short id as fluksio prints it. */
  prefix: z
    .string()
    .regex(/^[0-9A-Za-z]{1,26}$/, 'a run id or the start of one (letters and digits)')
    .optional(),
  /**
   * Only runs at one of these commits: full SHAs joined by commas (a revision resolved by
   * the caller's git, and its first-parent ancestors, for `fluksio diff --remote main`).
   */
  commit: z
    .string()
    .transform((list) => list.split(','))
    .pipe(z.array(CommitSha).min(1).max(RUN_LIST_COMMITS_MAX))
    .optional(),
  /** Only runs of this branch (a push's branch, a pull request's head, a submit's branch). */
  branch: BranchName.optional(),
  /** Only runs in this state. */
  status: RunStatus.optional(),
  limit: z.coerce.number().int().min(1).max(RUN_LIST_MAX).default(20),
});
export type RunListQuery = z.infer<typeof RunListQuery>;

/** One run of the list, newest first: what `fluksio runs --remote` shows of it. */
export const RunListItem = z.object({
  id: z.string(),
  repository: z.string(),
  pipelinePath: z.string(),
  commit: z.string().nullable(),
  /** The run's branch; null when unknown. Absent from older servers' lists. */
  branch: z.string().nullable().default(null),
  /** Made on uncommitted changes, or its code changed while it ran. Absent from older servers' lists. */
  dirty: z.boolean().default(false),
  /** The stages asked for, when the run ran fewer than all. Absent from older servers' lists. */
  selection: StageSelection.nullable().default(null),
  params: z.record(z.string(), ParamValue),
  /** The digest of `params`, to prefer a run with the same params. Absent from older servers' lists. */
  paramsDigest: z.string().optional(),
  status: RunStatus,
  groupId: z.string().nullable(),
  createdAt: z.string(),
  durationMs: z.number().nullable(),
  metrics: z.record(z.string(), z.number()),
});
export type RunListItem = z.infer<typeof RunListItem>;

export const RunListReply = z.object({ runs: z.array(RunListItem) });
export type RunListReply = z.infer<typeof RunListReply>;

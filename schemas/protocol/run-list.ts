import { z } from 'zod';
import { ParamValue } from '../key-inputs.js';
import { RunStatus } from '../statuses.js';

/** The most runs one `GET /api/v1/runs` answers. */
export const RUN_LIST_MAX = 200;

/** `GET /api/v1/runs?repository=&prefix=&limit=`: which runs to list. */
export const RunListQuery = z.strictObject({
  /** Only this repository's runs (one the token reaches); default: every one it reaches. */
  repository: z.string().min(1).max(300).optional(),
  /** Only runs whose id starts with this (any case): a short id as fluksio prints it. */
  prefix: z
    .string()
    .regex(/^[0-9A-Za-z]{1,26}$/, 'a run id or the start of one (letters and digits)')
    .optional(),
  limit: z.coerce.number().int().min(1).max(RUN_LIST_MAX).default(20),
});
export type RunListQuery = z.infer<typeof RunListQuery>;

/** One run of the list, newest first: what `fluksio runs --remote` shows of it. */
export const RunListItem = z.object({
  id: z.string(),
  repository: z.string(),
  pipelinePath: z.string(),
  commit: z.string().nullable(),
  params: z.record(z.string(), ParamValue),
  status: RunStatus,
  groupId: z.string().nullable(),
  createdAt: z.string(),
  durationMs: z.number().nullable(),
  metrics: z.record(z.string(), z.number()),
});
export type RunListItem = z.infer<typeof RunListItem>;

export const RunListReply = z.object({ runs: z.array(RunListItem) });
export type RunListReply = z.infer<typeof RunListReply>;

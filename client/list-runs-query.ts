import type { RunStatus } from '../schemas/statuses.js';

/** Which runs ControlPlaneClient.listRuns asks for: every field a filter, but `limit`. */
export interface ListRunsQuery {
  repository?: string;
  pipelinePath?: string;
  prefix?: string;
  commits?: readonly string[];
  branch?: string;
  status?: RunStatus;
  limit: number;
}

/** The query string of `GET /api/v1/runs` (RunListQuery) for a ListRunsQuery. */
export function listRunsSearchParams(query: ListRunsQuery): URLSearchParams {
  const params = new URLSearchParams({ limit: String(query.limit) });
  if (query.repository !== undefined) params.set('repository', query.repository);
  if (query.pipelinePath !== undefined) params.set('pipeline', query.pipelinePath);
  if (query.prefix !== undefined) params.set('prefix', query.prefix);
  if (query.commits !== undefined) params.set('commit', query.commits.join(','));
  if (query.branch !== undefined) params.set('branch', query.branch);
  if (query.status !== undefined) params.set('status', query.status);
  return params;
}

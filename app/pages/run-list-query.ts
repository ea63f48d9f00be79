import { z } from 'zod';
import { RepositoryName } from '../../schemas/protocol/repository-name.js';
import { RunStatus } from '../../schemas/statuses.js';
import type { RunListFilter } from '../../store/runs/list-repository-runs.js';

/** Runs a list page shows at once. */
export const RUN_LIST_PAGE_SIZE = 25;
/** At most this many `param.NAME=` filters. */
const MAX_PARAM_FILTERS = 16;

const names = (text: string) => [...new Set(text.split(',').filter(Boolean))];

const Fields = z.object({
  // A repository as runs name it: `owner/name` on GitHub, host and path elsewhere
  // (`gitlab.corp/ml/model`); or one word, as `fluksio ui` names the project's own (`local`).
  repo: z
    .string()
    .max(300)
    .pipe(
      z.union([z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/), RepositoryName], {
        error: 'expected a repository, owner/name (host/path for one elsewhere)',
      }),
    )
    .optional(),
  pr: z.coerce
    .number({ error: 'expected a pull request number' })
    .int()
    .min(1)
    .max(2 ** 31 - 1)
    .optional(),
  branch: z.string().min(1).max(255).optional(),
  status: z
    .string()
    .transform(names)
    .pipe(z.array(RunStatus, { error: `expected run states (${RunStatus.options.join(', ')})` }))
    .optional(),
  before: z.string().min(1).max(64).optional(),
});

/**
 * A run list's query (`/runs?repo=acme/model&pr=12&branch=main&status=failed&param.lr=0.1&before=01J…`):
 * the repository (the source's own when absent), the filters, and the keyset cursor. Any
 * other key is refused, so a misspelt filter is never silently ignored.
 */
export const RunListQuery = Fields.catchall(z.string().max(200)).superRefine((query, context) => {
  const params = Object.keys(query).filter((key) => key.startsWith('param.'));
  for (const key of params)
    if (!/^param\.[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(key))
      context.addIssue({
        code: 'custom',
        path: [key],
        message: 'expected param.NAME=value with a param name',
      });
  if (params.length > MAX_PARAM_FILTERS)
    context.addIssue({ code: 'custom', path: [], message: `at most ${MAX_PARAM_FILTERS} param filters` });
  // The credential a page carries (signed link, local secret) passes through; any other
  // unknown key is a mistake, never a filter silently ignored.
  const known = new Set([...Object.keys(Fields.shape), 'exp', 'sig', 'token']);
  for (const key of Object.keys(query))
    if (!key.startsWith('param.') && !known.has(key))
      context.addIssue({
        code: 'custom',
        path: [key],
        message: 'is not a filter (expected repo, pr, branch, status, param.NAME or before)',
      });
});

/** The filter and cursor a parsed query stands for, over `repository`. */
export function runListFilter(
  query: z.output<typeof RunListQuery>,
  repository: string,
): { filter: RunListFilter; before: string | undefined } {
  const params = Object.fromEntries(
    Object.entries(query)
      .filter(([key]) => key.startsWith('param.'))
      .map(([key, value]) => [key.slice('param.'.length), String(value)]),
  );
  return {
    filter: { repository, prNumber: query.pr, branch: query.branch, statuses: query.status, params },
    before: query.before,
  };
}

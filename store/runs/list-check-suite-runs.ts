import { and, desc, eq, not, like } from 'drizzle-orm';
import { githubChecks } from '../../schemas/tables/github-checks.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { escapeLike } from '../db/escape-like.js';

/**
 * The latest run behind each check run name fluksio reported on a commit of a repository:
 * what "Re-run all checks" (`check_suite.rerequested`) runs again. Notices (approvals,
 * broken pipelines) are no runs and are not listed. Runs made by `exceptDelivery` are
 * left out, so a retried delivery lists the same runs its first attempt did.
 */
export async function listCheckSuiteRuns({
  db,
  repository,
  headSha,
  exceptDelivery,
}: {
  db: Database;
  repository: string;
  headSha: string;
  exceptDelivery: string;
}): Promise<Run[]> {
  const rows = await db
    .select({ run: runs, name: githubChecks.name })
    .from(githubChecks)
    .innerJoin(runs, eq(runs.id, githubChecks.runId))
    .where(
      and(
        eq(githubChecks.repository, repository),
        eq(githubChecks.headSha, headSha),
        not(like(runs.triggerKey, `delivery:${escapeLike(exceptDelivery)}:%`)),
      ),
    )
    .orderBy(desc(runs.createdAt), desc(runs.id));
  const latest = new Map<string, Run>();
  for (const { run, name } of rows) if (!latest.has(name)) latest.set(name, run);
  return [...latest.values()].reverse();
}

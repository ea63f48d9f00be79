import { and, eq, isNull, notLike, or } from 'drizzle-orm';
import { escapeLike } from '../db/escape-like.js';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';

/**
 * Whether any run of `repository` comes from elsewhere than GitHub: a run GitHub's
 * webhook made has an installation, one submitted for a GitHub repository fetches from
 * under `githubCloneUrlPrefix` (the control plane names it by exactly that URL's
 * `owner/name`, clone-url-policy.ts); every other run (another host's `scm/ml`, a path's `local/srv`, a run
 * with no clone URL) is not GitHub's, whatever its name looks like. A repository with
 * such a run is not GitHub's to open to a signed-in user: GitHub answers for its own
 * repository of the same name, which anybody may own.
 */
export async function hasRunsOffGitHub({
  db,
  repository,
  githubCloneUrlPrefix,
}: {
  db: Database;
  repository: string;
  /** What GitHub's clone URLs start with (`https://github.com/`). */
  githubCloneUrlPrefix: string;
}): Promise<boolean> {
  const [found] = await db
    .select({ id: runs.id })
    .from(runs)
    .where(
      and(
        eq(runs.repository, repository),
        isNull(runs.installationId),
        or(isNull(runs.cloneUrl), notLike(runs.cloneUrl, `${escapeLike(githubCloneUrlPrefix)}%`)),
      ),
    )
    .limit(1);
  return found !== undefined;
}

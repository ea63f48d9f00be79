import { githubNotices, type NewGitHubNoticeRow } from '../../schemas/tables/github-notices.js';
import type { Database } from '../db/database.js';

/**
 * Records an `action_required` notice (an approval a fork's pull request needs, a broken
 * `fluksio.yml`) unless one with its id exists: the id names the commit and what it is
 * about, so a redelivery or a second event about the same commit makes no second check
 * run. Returns whether this call made it.
 */
export async function recordNotice({
  db,
  notice,
}: {
  db: Database;
  notice: Pick<
    NewGitHubNoticeRow,
    'id' | 'installationId' | 'repository' | 'headSha' | 'name' | 'kind' | 'body'
  >;
}): Promise<boolean> {
  const inserted = await db
    .insert(githubNotices)
    .values(notice)
    .onConflictDoNothing({ target: githubNotices.id })
    .returning({ id: githubNotices.id });
  return inserted.length > 0;
}

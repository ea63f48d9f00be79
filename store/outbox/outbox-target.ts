import { githubChecks } from '../../schemas/tables/github-checks.js';
import { githubNotices } from '../../schemas/tables/github-notices.js';
import { groupComments } from '../../schemas/tables/group-comments.js';

/**
 * What the GitHub outbox keeps in step with GitHub: a run's check run (`id` = run id), a
 * notice's `action_required` check run (`id` = notice id), or a sweep's pull-request
 * comment (`id` = group id). Each is one row with a render and a sent version.
 */
export interface OutboxTarget {
  kind: 'check' | 'notice' | 'group';
  id: string;
}

/** The table of a kind of target and the columns every outbox table has. */
export function outboxTable(kind: OutboxTarget['kind']) {
  switch (kind) {
    case 'check':
      return { table: githubChecks, key: githubChecks.runId, ...versions(githubChecks) };
    case 'notice':
      return { table: githubNotices, key: githubNotices.id, ...versions(githubNotices) };
    case 'group':
      return { table: groupComments, key: groupComments.groupId, ...versions(groupComments) };
  }
}

function versions<T extends typeof githubChecks | typeof githubNotices | typeof groupComments>(table: T) {
  return { renderVersion: table.renderVersion, sentVersion: table.sentVersion };
}

import type { Logger } from 'pino';
import type { Database } from '../../../store/db/database.js';
import type { PageLinkSigner } from '../../pages/page-link-signer.js';
import type { OutboxOctokit } from './outbox-octokit.js';

/** What a sync of one outbox target works with, made by the outbox for each attempt. */
export interface SyncContext {
  db: Database;
  /** The client of an installation; rejects with OutboxRateLimitError while GitHub's limit holds. */
  github(installationId: number): Promise<OutboxOctokit>;
  /**
   * True when an earlier attempt at this target may have reached GitHub without its answer
   * arriving (it failed or its worker died): what GitHub holds is read back, not assumed.
   */
  uncertain: boolean;
  /** Base check name, for a sweep member without one recorded. */
  checkName: string;
  /** The control plane's URL that check runs link to (`<it>/api/v1/runs/<id>`). */
  apiBaseUrlForLinks: string;
  /** Signs the run pages' links (`<apiBaseUrlForLinks>/runs/<id>?exp=…&sig=…`); null links to the API. */
  pageLinks: PageLinkSigner | null;
  inProgressRefreshMs: number;
  logger: Logger;
}

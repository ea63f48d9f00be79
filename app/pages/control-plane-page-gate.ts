import type { FastifyRequest } from 'fastify';
import type { Database } from '../../store/database.js';
import { findApiTokenByHash } from '../../store/find-api-token-by-hash.js';
import { hashToken } from '../http/hash-token.js';
import { tokenReaches } from '../http/authenticate-submitter.js';
import type { PageGate, PageVerdict } from './page-gate.js';
import type { PageLinkSigner } from './page-link-signer.js';

/**
 * Who may look on a control plane: the holder of a signed link for the repository
 * (check runs and comments carry one), or of an API token that reaches it (scripts).
 * Everyone else, a token for another repository included, gets the answer a missing run
 * gets; a genuine link past its expiry is told so (403).
 */
export function controlPlanePageGate({ db, signer }: { db: Database; signer: PageLinkSigner }): PageGate {
  return {
    async admit(request: FastifyRequest, repository: string): Promise<PageVerdict> {
      const query = request.query as Record<string, string | undefined>;
      const link = signer.check(repository, query.exp, query.sig);
      if (link === 'valid') return 'allowed';
      const header = request.headers.authorization;
      const bearer = header?.match(/^Bearer ([^\s]+)$/i)?.[1];
      if (bearer !== undefined) {
        const token = await findApiTokenByHash({ db, tokenHash: hashToken(bearer) });
        if (token && tokenReaches(token, repository)) return 'allowed';
        return 'hidden';
      }
      return link === 'expired' ? 'expired' : 'hidden';
    },
  };
}

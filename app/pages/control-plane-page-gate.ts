import type { FastifyRequest } from 'fastify';
import type { Database } from '../../store/db/database.js';
import { findApiTokenByHash } from '../../store/tokens/find-api-token-by-hash.js';
import { hasRunsOffGitHub } from '../../store/runs/has-runs-off-github.js';
import { GITHUB_CLONE_URL_PREFIX } from '../clone-url-policy.js';
import { hashToken } from '../http/hash-token.js';
import { tokenReaches } from '../http/authenticate-submitter.js';
import type { PageGate, PageVerdict } from './page-gate.js';
import type { PageLinkSigner } from './page-link-signer.js';
import { sessionOf, type PageSignIn } from './page-sign-in.js';

/**
 * Who may look on a control plane: the holder of a signed link for the repository
 * (check runs and comments carry one), of an API token that reaches it (scripts), or, with
 * sign-in configured, a signed-in user whom GitHub lets read it (asked with the user's
 * token, kept briefly) — only for a repository all of whose runs are GitHub's: one named
 * like a GitHub repository but fetched from elsewhere (`local/srv`, `scm/ml`) is not
 * GitHub's to open. Everyone else gets the answer a missing run gets; without sign-in
 * a genuine link past its expiry is told so (403); with it, anyone not signed in is sent to
 * sign in before anything about the run, its existence included, is looked at.
 */
export function controlPlanePageGate({
  db,
  signer,
  signIn = null,
}: {
  db: Database;
  signer: PageLinkSigner;
  signIn?: PageSignIn | null;
}): PageGate {
  return {
    async admit(request: FastifyRequest, repository: string | null): Promise<PageVerdict> {
      const query = request.query as Record<string, string | undefined>;
      const link = repository === null ? 'invalid' : signer.check(repository, query.exp, query.sig);
      if (link === 'valid') return 'allowed';
      const header = request.headers.authorization;
      const bearer = header?.match(/^Bearer ([^\s]+)$/i)?.[1];
      if (bearer !== undefined) {
        const token = await findApiTokenByHash({ db, tokenHash: hashToken(bearer) });
        if (repository !== null && token && tokenReaches(token, repository)) return 'allowed';
        return 'hidden';
      }
      if (signIn) {
        const found = await sessionOf(request, signIn);
        if (!found) return 'sign-in';
        if (repository === null) return 'hidden';
        // Asked each time, not kept with GitHub's answer: a run from elsewhere may come at any time.
        if (await hasRunsOffGitHub({ db, repository, githubCloneUrlPrefix: GITHUB_CLONE_URL_PREFIX })) {
          return 'hidden';
        }
        const access = await signIn.sessions.access(found.session, repository, () =>
          signIn.github.access(found.session.token, repository),
        );
        if (access === 'read') return 'allowed';
        if (access === 'none') return 'hidden';
        // GitHub no longer takes the token (revoked, expired): the session is over.
        await signIn.sessions.destroy(found.id);
        return 'sign-in';
      }
      return link === 'expired' ? 'expired' : 'hidden';
    },
    async viewer(request: FastifyRequest): Promise<string | null> {
      return signIn ? ((await sessionOf(request, signIn))?.session.user.login ?? null) : null;
    },
  };
}

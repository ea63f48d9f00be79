import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PageGate } from './page-gate.js';
import { messagePage } from './page-shell.js';

/**
 * Asks the gate whether `request` may see every one of `repositories` (null: a run or
 * sweep that does not exist, called `what` in the answer); when it may not, answers the
 * refusal itself — an HTML page or a redirect to sign in when `html`, else JSON — and
 * resolves false.
 */
export type PageAdmission = (
  request: FastifyRequest,
  reply: FastifyReply,
  repositories: readonly (string | null)[],
  what: string,
  html: boolean,
) => Promise<boolean>;

/** The admission every page route and page API answer asks first, decided by `gate`. */
export function pageAdmission(gate: PageGate): PageAdmission {
  return async (request, reply, repositories, what, html) => {
    let refusal: { code: number; title: string; message: string } | null = null;
    for (const repository of repositories) {
      const verdict = await gate.admit(request, repository);
      if (verdict === 'allowed') continue;
      if (verdict === 'sign-in') {
        // Asked before anything about the run is known: a run that does not exist is sent
        // to sign in exactly as one that does.
        const login = `/auth/github/login?next=${encodeURIComponent(request.url)}`;
        if (html) await reply.header('cache-control', 'no-store').redirect(login, 302);
        else
          await reply.code(401).send({
            error: `Sign in with GitHub to see this: open ${login} in a browser, or use an API token`,
          });
        return false;
      }
      refusal =
        verdict === 'expired'
          ? {
              code: 403,
              title: 'This link has expired',
              message:
                'Links in check runs and comments expire. Open the run again from its check run on GitHub for a fresh link, or use an API token.',
            }
          : verdict === 'forbidden'
            ? {
                code: 403,
                title: 'Forbidden',
                message:
                  'Open the address "fluksio ui" printed: it carries the secret that opens these pages.',
              }
            : { code: 404, title: 'Not found', message: `There is no ${what}.` };
      break;
    }
    if (refusal === null) return true;
    if (html)
      await reply
        .code(refusal.code)
        .type('text/html; charset=utf-8')
        .send(messagePage(refusal.title, refusal.message));
    else await reply.code(refusal.code).send({ error: `${refusal.title}: ${refusal.message}` });
    return false;
  };
}

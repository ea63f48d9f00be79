import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { messagePage } from './page-shell.js';
import { SESSION_COOKIE, sessionOf, STATE_COOKIE, type PageSignIn } from './page-sign-in.js';
import { SESSION_TTL_S } from './page-sessions.js';
import { ReturnPath, SIGN_IN_TTL_MS } from './sign-in-state.js';

const LoginQuery = z.object({ next: ReturnPath.default('/') }).loose();
const CallbackQuery = z
  .object({
    code: z.string().min(1).max(200).optional(),
    state: z.string().min(1).max(4000).optional(),
    error: z.string().max(200).optional(),
  })
  .loose();

/**
 * Sign-in with GitHub for the run pages (the App's OAuth web flow):
 * `GET /auth/github/login?next=/runs/…` sends the browser to GitHub with a signed state
 * bound to a cookie; `GET /auth/github/callback` checks both, exchanges the code for the
 * user's token, and starts a session (an HttpOnly, SameSite=Lax, signed cookie naming it,
 * Secure behind https) before returning to `next`; `POST /auth/signout` ends it. The token
 * stays on the server; logs show neither the code nor the state (quiet-request-logs.ts).
 */
export function signInRoutes(app: FastifyInstance, signIn: PageSignIn): void {
  const cookieOptions = {
    httpOnly: true,
    secure: signIn.secureCookies,
    sameSite: 'lax' as const,
    signed: true,
  };
  const refuse = (reply: FastifyReply, status: number, title: string, message: string) =>
    reply
      .code(status)
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(messagePage(title, message));

  app.get('/auth/github/login', async (request, reply) => {
    const parsed = LoginQuery.safeParse(request.query);
    if (!parsed.success)
      return refuse(
        reply,
        400,
        'Bad sign-in link',
        `next: ${parsed.error.issues[0]?.message ?? 'is not valid'}`,
      );
    const { state, nonce } = signIn.state.issue(parsed.data.next);
    return reply
      .setCookie(STATE_COOKIE, nonce, {
        ...cookieOptions,
        path: '/auth/github',
        maxAge: SIGN_IN_TTL_MS / 1000,
      })
      .header('cache-control', 'no-store')
      .redirect(signIn.github.authorizeUrl(state), 302);
  });

  app.get('/auth/github/callback', async (request, reply) => {
    const again =
      'Open the page again to start a new sign-in; it must be finished within 10 minutes, in the browser it started in.';
    const query = CallbackQuery.safeParse(request.query);
    if (!query.success || query.data.error !== undefined || !query.data.code || !query.data.state)
      return refuse(reply, 403, 'Sign-in did not complete', `GitHub did not authorize the sign-in. ${again}`);
    const checked = signIn.state.check(query.data.state);
    const cookie = request.cookies[STATE_COOKIE];
    const nonce = cookie === undefined ? null : request.unsignCookie(cookie);
    if (typeof checked === 'string' || !nonce?.valid || nonce.value !== checked.nonce)
      return refuse(
        reply,
        403,
        'Sign-in refused',
        checked === 'expired'
          ? `This sign-in took too long. ${again}`
          : `This sign-in's state is not valid here. ${again}`,
      );
    let session: { id: string; ttlS: number; login: string };
    try {
      const { token, expiresAt } = await signIn.github.exchange(query.data.code);
      const user = await signIn.github.user(token);
      const ttlS = Math.min(
        SESSION_TTL_S,
        expiresAt ? (expiresAt.getTime() - Date.now()) / 1000 : SESSION_TTL_S,
      );
      session = { id: await signIn.sessions.create({ user, token }, ttlS), ttlS, login: user.login };
    } catch (error) {
      // The message names the OAuth error (bad_verification_code…), never the code or a token.
      request.log.warn({ err: { message: (error as Error).message } }, 'sign-in with GitHub failed');
      return refuse(reply, 403, 'Sign-in failed', `GitHub refused the sign-in. ${again}`);
    }
    request.log.info({ user: session.login }, 'signed in with GitHub');
    return reply
      .clearCookie(STATE_COOKIE, { path: '/auth/github' })
      .setCookie(SESSION_COOKIE, session.id, {
        ...cookieOptions,
        path: '/',
        maxAge: Math.floor(session.ttlS),
      })
      .header('cache-control', 'no-store')
      .redirect(checked.next, 302);
  });

  // A form posts here; SameSite=Lax keeps other sites' forms from signing anyone out.
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', (_request, _body, done) =>
      done(null, {}),
    );
    scope.post('/auth/signout', async (request, reply) => {
      const found = await sessionOf(request, signIn);
      if (found) await signIn.sessions.destroy(found.id);
      return reply
        .clearCookie(SESSION_COOKIE, { path: '/' })
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(
          messagePage(
            'Signed out',
            'You are signed out of the fluksio pages. Open a run page to sign in again.',
          ),
        );
    });
  });
}

// The cookie plugin's request and reply methods (buildServer registers it with sign-in).
import type {} from '@fastify/cookie';
import { createHmac } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import type { GitHubAppSettings } from '../github-app-settings.js';
import { GitHubSignIn } from './github-sign-in.js';
import { PageSessions, type PageSession } from './page-sessions.js';
import { SignInState } from './sign-in-state.js';

/** The session cookie: a signed random id (page-sessions.ts keeps what it stands for). */
export const SESSION_COOKIE = 'fluksio_session';
/** The sign-in's nonce, bound to its OAuth state, only while the user is on GitHub. */
export const STATE_COOKIE = 'fluksio_sign_in';

/** Everything sign-in with GitHub needs, made once by buildServer when the App has an OAuth client. */
export interface PageSignIn {
  github: GitHubSignIn;
  sessions: PageSessions;
  state: SignInState;
  /** Cookies are `Secure` when the public URL is https. */
  secureCookies: boolean;
  /** What the cookies are signed with (@fastify/cookie). */
  cookieSecret: Buffer;
}

/** What a key derived from the pages' secret is for: one key per use. */
export type SignInKeyUse = 'page sessions' | 'sign-in state' | 'page cookies';

/** The key for `use`, derived from the pages' secret. */
export function signInKey(secret: Buffer, use: SignInKeyUse): Buffer {
  return createHmac('sha256', secret).update(`fluksio ${use} v1`).digest();
}

/**
 * Sign-in with GitHub for an App with an OAuth client; null without one. Every key is
 * derived from `secret` (the pages' secret, which every replica shares), one per use.
 */
export function createPageSignIn({
  github,
  redis,
  queuePrefix,
  secret,
  fetch,
}: {
  github: GitHubAppSettings | null;
  redis: Redis;
  queuePrefix: string;
  secret: Buffer;
  /** What sign-in calls GitHub with (a deadline's, app/github/fetch-with-deadline.ts). */
  fetch: typeof globalThis.fetch;
}): PageSignIn | null {
  if (!github?.signIn) return null;
  const derive = (use: SignInKeyUse) => signInKey(secret, use);
  return {
    github: new GitHubSignIn({
      ...github.signIn,
      apiUrl: github.apiUrl,
      callbackUrl: `${github.publicUrl}/auth/github/callback`,
      fetch,
    }),
    sessions: new PageSessions(redis, queuePrefix, derive('page sessions')),
    state: new SignInState(derive('sign-in state')),
    secureCookies: github.publicUrl.startsWith('https:'),
    cookieSecret: derive('page cookies'),
  };
}

/**
 * The session a request's cookie names, with its id; null without a cookie, with one whose
 * signature does not hold (tampered), or one whose session ended.
 */
export async function sessionOf(
  request: FastifyRequest,
  signIn: PageSignIn,
): Promise<{ id: string; session: PageSession } | null> {
  const cookie = request.cookies[SESSION_COOKIE];
  if (cookie === undefined) return null;
  const unsigned = request.unsignCookie(cookie);
  if (!unsigned.valid || unsigned.value === null) return null;
  const session = await signIn.sessions.read(unsigned.value);
  return session ? { id: unsigned.value, session } : null;
}

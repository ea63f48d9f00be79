import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** How long a sign-in may take between leaving for GitHub and coming back. */
export const SIGN_IN_TTL_MS = 10 * 60_000;

/** A path on this server: one `/`, then neither `/` nor `\` (`//host` and `/\host` are another host's). */
const onThisServer = (path: string) => /^\/(?![/\\])/.test(path) && !/[\\\s]/.test(path);
const NOT_ON_THIS_SERVER = 'must be a path on this server, such as /runs/01J…';

/**
 * A page's own path and query to return to after signing in: same origin only, so the
 * callback never sends anyone elsewhere (`//evil.example`, `/\evil.example` and absolute
 * URLs are refused, and so is a path whose dot segments fold into one of them once
 * resolved, `/.//evil.example`). The signed link's `exp` and `sig` are dropped: a session
 * replaces them.
 */
export const ReturnPath = z
  .string()
  .max(2000, { error: 'must be at most 2000 characters' })
  .refine(onThisServer, { error: NOT_ON_THIS_SERVER })
  .transform((path) => {
    const url = new URL(path, 'http://same.origin');
    url.searchParams.delete('exp');
    url.searchParams.delete('sig');
    return `${url.pathname}${url.search}`;
  })
  .refine(onThisServer, { error: NOT_ON_THIS_SERVER });

const StateBody = z.strictObject({
  nonce: z.string().regex(/^[0-9a-f]{32}$/),
  next: ReturnPath,
  exp: z.number(),
});

/** What a callback's `state` says: where to return and the nonce its cookie must hold, or why not. */
export type StateCheck = { nonce: string; next: string } | 'invalid' | 'expired';

/**
 * The OAuth `state` of a sign-in (RFC 6749 §10.12): HMAC-signed, expiring after
 * SIGN_IN_TTL_MS, carrying the path to return to and a nonce that the browser also holds in
 * a cookie, so a callback made in another browser (login CSRF) or with a forged or reused
 * state is refused.
 */
export class SignInState {
  constructor(private readonly key: Buffer) {}

  /** A new state for returning to `next`, and the nonce to put in the browser's cookie. */
  issue(
    next: string,
    now = Date.now(),
    nonce = randomBytes(16).toString('hex'),
  ): { state: string; nonce: string } {
    const body = Buffer.from(JSON.stringify({ nonce, next, exp: now + SIGN_IN_TTL_MS })).toString(
      'base64url',
    );
    return { state: `${body}.${this.sign(body)}`, nonce };
  }

  /** Checks a state's signature and age; a forged one is `invalid`, never `expired`. */
  check(state: string, now = Date.now()): StateCheck {
    const [body = '', signature = '', ...rest] = state.split('.');
    if (rest.length > 0 || !/^[0-9a-f]{64}$/.test(signature)) return 'invalid';
    if (!timingSafeEqual(Buffer.from(this.sign(body), 'hex'), Buffer.from(signature, 'hex')))
      return 'invalid';
    let parsed: z.infer<typeof StateBody>;
    try {
      parsed = StateBody.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
    } catch {
      return 'invalid';
    }
    return parsed.exp > now ? { nonce: parsed.nonce, next: parsed.next } : 'expired';
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(`fluksio-sign-in\n${body}`).digest('hex');
  }
}

import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/** The app a JWT must come from, and the clock to check it by. */
export interface AppJwtExpectation {
  appId: number;
  /** The app's private key (PEM) or its public key. */
  key: string | KeyObject;
  /** @defaultValue the current time, in seconds since the epoch */
  nowSeconds?: number;
}

// GitHub refuses a JWT whose expiry is more than 10 minutes after it was issued; a minute of
// slack is allowed for clocks, as universal-github-app-jwt back-dates `iat` by 30 s.
const MAX_LIFETIME_SECONDS = 10 * 60;
const CLOCK_SLACK_SECONDS = 60;

/**
 * Checks a GitHub App JWT as GitHub does: RS256, signed by the app's key, `iss` the app id,
 * issued in the past, not expired, living at most ten minutes. Returns why it is refused, or
 * `undefined` when it is good.
 */
export function appJwtProblem(token: string, expected: AppJwtExpectation): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return 'the token is not a JWT (three dot-separated parts)';
  const [encodedHeader = '', encodedPayload = '', signature = ''] = parts;
  let header: { alg?: unknown };
  let payload: { iss?: unknown; iat?: unknown; exp?: unknown };
  try {
    header = JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8')) as typeof header;
    payload = JSON.parse(Buffer.from(encodedPayload, 'base64url').toString('utf8')) as typeof payload;
  } catch {
    return 'the JWT header or payload is not base64url-encoded JSON';
  }
  if (header.alg !== 'RS256') return `the JWT is signed with ${String(header.alg)}; GitHub expects RS256`;
  const publicKey = createPublicKey(expected.key);
  const signed = Buffer.from(`${encodedHeader}.${encodedPayload}`);
  if (!verify('RSA-SHA256', signed, publicKey, Buffer.from(signature, 'base64url'))) {
    return "the JWT's signature does not match the app's private key";
  }
  if (String(payload.iss) !== String(expected.appId)) {
    return `the JWT's iss is ${JSON.stringify(payload.iss)}; expected the app id ${expected.appId}`;
  }
  const now = expected.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number') {
    return 'the JWT lacks numeric iat and exp claims';
  }
  if (payload.iat > now + CLOCK_SLACK_SECONDS)
    return "'Issued at' claim ('iat') must be an Integer representing a time in the past";
  if (payload.exp <= now) return "'Expiration time' claim ('exp') is in the past";
  if (payload.exp - payload.iat > MAX_LIFETIME_SECONDS + CLOCK_SLACK_SECONDS) {
    return "'Expiration time' claim ('exp') is too far in the future";
  }
  return undefined;
}

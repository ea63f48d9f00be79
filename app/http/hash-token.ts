import { hash } from 'node:crypto';

/**
 * What the database keeps of a runner or API token: its sha256, hex (DESIGN §6). Tokens
 * are 256-bit random strings, so a plain hash is enough; the token itself is never stored
 * or logged. One-shot `hash`, not a `createHash` object: a quarter of the time, and every
 * authenticated request hashes its token before anything else.
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

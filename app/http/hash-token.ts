import { createHash } from 'node:crypto';

/**
 * What the database keeps of a runner or API token: its sha256, hex (DESIGN §6). Tokens
 * are 256-bit random strings, so a plain hash is enough; the token itself is never stored
 * or logged.
 */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

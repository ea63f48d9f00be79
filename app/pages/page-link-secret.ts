import { createHmac, randomBytes } from 'node:crypto';
import type { ControlPlaneSettings } from '../control-plane-settings.js';

/**
 * The key page links are signed with: FLUKSIO_PAGES_SECRET, else one derived from the
 * GitHub App's private key (every replica holds it, and it never leaves the server), else
 * a random one for this process only (`shared: false`: links die with the process).
 */
export function pageLinkSecret(settings: Pick<ControlPlaneSettings, 'pagesSecret' | 'github'>): {
  secret: Buffer;
  shared: boolean;
} {
  if (settings.pagesSecret !== null) return { secret: Buffer.from(settings.pagesSecret), shared: true };
  if (settings.github)
    return {
      secret: createHmac('sha256', settings.github.privateKey).update('fluksio page links v1').digest(),
      shared: true,
    };
  return { secret: randomBytes(32), shared: false };
}

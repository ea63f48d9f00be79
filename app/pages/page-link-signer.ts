import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a signed link's query says about itself. */
export type LinkCheck = 'valid' | 'expired' | 'invalid';

/**
 * Signs the links fluksio places in check runs and comments (HMAC-SHA256 over the
 * repository and an expiry time), so whoever GitHub shows the check run to can open the
 * repository's pages until the link expires. A link grants one repository only: the
 * signature covers its name, and a run page's data, logs and the sweep and compare pages
 * reached from it check the same pair.
 */
export class PageLinkSigner {
  constructor(
    private readonly secret: Buffer,
    /** How long a new link stays valid, in milliseconds. */
    private readonly ttlMs: number,
  ) {
    if (secret.length < 32) throw new Error('the page link secret must be at least 32 bytes');
    if (!(ttlMs > 0)) throw new Error('the page link lifetime must be greater than 0');
  }

  /** The query (`exp=…&sig=…`) that opens `repository`'s pages until `now + ttl`. */
  sign(repository: string, now = Date.now()): string {
    const exp = Math.floor((now + this.ttlMs) / 1000);
    return `exp=${exp}&sig=${this.signature(repository, exp)}`;
  }

  /** Whether `exp` and `sig` open `repository`'s pages at `now`. A forged link is `invalid`, never `expired`. */
  check(repository: string, exp: string | undefined, sig: string | undefined, now = Date.now()): LinkCheck {
    if (exp === undefined || sig === undefined || !/^\d{1,12}$/.test(exp) || !/^[0-9a-f]{64}$/.test(sig))
      return 'invalid';
    const expected = Buffer.from(this.signature(repository, Number(exp)), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(sig, 'hex'))) return 'invalid';
    return Number(exp) * 1000 > now ? 'valid' : 'expired';
  }

  private signature(repository: string, exp: number): string {
    return createHmac('sha256', this.secret).update(`fluksio-pages\n${repository}\n${exp}`).digest('hex');
  }
}

import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { GitHubUser, RepositoryAccess } from './github-sign-in.js';

/** A signed-in user as the pages know them; the GitHub token never leaves the server. */
export interface PageSession {
  user: GitHubUser;
  /** The user's GitHub token, for asking GitHub what they may read. */
  token: string;
}

/** Longest a session lasts: a GitHub App's user token lives 8 hours. */
export const SESSION_TTL_S = 8 * 3600;

const Stored = z.strictObject({
  id: z.number().int(),
  login: z.string(),
  /** base64 of iv (12) ‖ tag (16) ‖ AES-256-GCM ciphertext of the token. */
  token: z.string(),
});

/**
 * The pages' sign-in sessions, in Redis so that every replica shares them: the cookie holds
 * a random 256-bit id; Redis holds, under the id's hash, the user and their token encrypted
 * (AES-256-GCM) with a key of the server's, so neither the cookie nor a Redis dump carries a
 * usable GitHub token. Whether a user may read a repository is kept for `accessTtlS`
 * (GitHub is asked again after that; a revoked access lasts at most that long).
 */
export class PageSessions {
  constructor(
    private readonly redis: Redis,
    /** The control plane's Redis key prefix. */
    private readonly prefix: string,
    /** 32 bytes. */
    private readonly key: Buffer,
    private readonly accessTtlS = 60,
  ) {
    if (key.length !== 32) throw new Error('the session key must be 32 bytes');
  }

  /** Stores a new session for `ttlS` seconds and returns its id, for the cookie. */
  async create(session: PageSession, ttlS: number): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(session.token, 'utf8'), cipher.final()]);
    const stored: z.infer<typeof Stored> = {
      id: session.user.id,
      login: session.user.login,
      token: Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64'),
    };
    await this.redis.set(this.sessionKey(id), JSON.stringify(stored), 'EX', Math.max(1, Math.floor(ttlS)));
    return id;
  }

  /** The session an id names, or null when there is none (expired, signed out, or made up). */
  async read(id: string): Promise<PageSession | null> {
    const text = await this.redis.get(this.sessionKey(id));
    if (text === null) return null;
    const stored = Stored.safeParse(JSON.parse(text));
    if (!stored.success) return null;
    try {
      const bytes = Buffer.from(stored.data.token, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, 12));
      decipher.setAuthTag(bytes.subarray(12, 28));
      const token = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
      return { user: { id: stored.data.id, login: stored.data.login }, token };
    } catch {
      // Sealed with another key (FLUKSIO_PAGES_SECRET changed): as good as signed out.
      return null;
    }
  }

  /** Ends a session (sign-out). */
  async destroy(id: string): Promise<void> {
    await this.redis.del(this.sessionKey(id));
  }

  /**
   * Whether the session's user may read `repository`: kept per (user, repository) for the
   * access TTL, else asked with `ask`. A dead token (`signed-out`) is never kept.
   */
  async access(
    session: PageSession,
    repository: string,
    ask: () => Promise<RepositoryAccess>,
  ): Promise<RepositoryAccess> {
    const key = `${this.prefix}:pages:access:${session.user.id}:${repository.toLowerCase()}`;
    const kept = await this.redis.get(key);
    if (kept === 'read' || kept === 'none') return kept;
    const answer = await ask();
    if (answer !== 'signed-out') await this.redis.set(key, answer, 'EX', this.accessTtlS);
    return answer;
  }

  private sessionKey(id: string): string {
    return `${this.prefix}:pages:session:${createHash('sha256').update(id).digest('hex')}`;
  }
}

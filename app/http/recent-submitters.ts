import type { FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { Database } from '../../store/db/database.js';
import { authenticateSubmitter } from './authenticate-submitter.js';
import { bearerToken } from './bearer-token.js';
import { hashToken } from './hash-token.js';

/** How long a token that passed is let past the body guard without being read again. */
const REMEMBERED_MS = 5 * 60_000;
/** Tokens remembered at most; the oldest are forgotten first. */
const MOST_REMEMBERED = 10_000;

/**
 * The guard before a submit's body is read: a token that is not known to have passed
 * lately is read (401/403 at once, the body never buffered, as requestAuth does); one that
 * passed in this process within minutes is let through unread. This is no authorization:
 * the submit's INSERT checks the token itself (create-queued-run.ts), so a token revoked
 * meanwhile queues nothing; it only spares the round trip on a submitter's every request.
 */
export class RecentSubmitters {
  private readonly passed = new LRUCache<string, true>({ max: MOST_REMEMBERED, ttl: REMEMBERED_MS });

  constructor(private readonly db: Database) {}

  /** The request's token hash, once the token passed now or lately; else 401 or 403. */
  async guard(request: FastifyRequest): Promise<string> {
    const tokenHash = hashToken(bearerToken(request, 'API token'));
    if (this.passed.has(tokenHash)) return tokenHash;
    await authenticateSubmitter(this.db, request, 'submit');
    this.passed.set(tokenHash, true);
    return tokenHash;
  }

  /** Forgets a token the INSERT refused: its next request is read before its body. */
  forget(tokenHash: string): void {
    this.passed.delete(tokenHash);
  }
}

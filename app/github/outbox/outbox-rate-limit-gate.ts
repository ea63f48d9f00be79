import type { Redis } from 'ioredis';

/**
 * Holds back every request of an installation while GitHub's rate limit for it lasts
 * (GitHub: "wait until the time in retry-after before making more requests"), across the
 * outbox's jobs and replicas: one job's 403 pauses the whole sweep's check runs instead
 * of each of them being refused in turn. Kept in Redis with the limit's own expiry.
 */
export class OutboxRateLimitGate {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Until when (epoch ms) the installation must wait; null when it may send now. */
  async blockedUntil(installationId: number, now = Date.now()): Promise<number | null> {
    const until = Number(await this.redis.get(this.key(installationId)));
    return Number.isFinite(until) && until > now ? until : null;
  }

  /** Holds the installation's requests back until `retryAt` (epoch ms). */
  async block(installationId: number, retryAt: number, now = Date.now()): Promise<void> {
    if (retryAt <= now) return;
    await this.redis.set(this.key(installationId), String(retryAt), 'PX', retryAt - now);
  }

  private key(installationId: number): string {
    return `${this.prefix}:github-outbox:rate-limited:${installationId}`;
  }
}

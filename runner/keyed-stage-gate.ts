import pLimit, { type LimitFunction } from 'p-limit';
import type { StageGate } from './ports.js';

/** A StageGate for the runs of one process: one p-limit of one per key held or awaited. */
export class KeyedStageGate implements StageGate {
  private readonly limits = new Map<string, LimitFunction>();

  async exclusive<T>(key: string, work: () => Promise<T>): Promise<T> {
    let limit = this.limits.get(key);
    if (!limit) {
      limit = pLimit(1);
      this.limits.set(key, limit);
    }
    try {
      return await limit(work);
    } finally {
      // The last one out forgets the key: a sweep's keys do not pile up.
      if (limit.activeCount === 0 && limit.pendingCount === 0) this.limits.delete(key);
    }
  }
}

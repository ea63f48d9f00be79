import type { CacheEntry } from '../../schemas/cache-entry.js';
import type { MetricPoint } from '../../schemas/metric-point.js';
import type { PreviousStage } from '../../schemas/previous-stage.js';
import type { TeamCacheClient } from '../../client/team-cache-client.js';
import { manifestKeyOf } from '../../core/manifest-key.js';
import { normalizePipelinePath } from '../../core/pipeline/pipeline-paths.js';
import { cacheKeyOf } from '../../runner/keys/cache-key.js';
import type { StageCache } from '../../runner/ports.js';

export interface TeamStageCacheOptions {
  client: TeamCacheClient;
  /**
   * Told once, when the team's cache first fails to answer (unreachable, refusing, answering
   * nonsense): it is not asked again by this process, so stages do not each wait for it.
   */
  onUnavailable(error: unknown): void;
  /** Told of an entry that is not taken although its key matched (a line on stderr). */
  warn(message: string): void;
}

/** A stage lookup waits on this: one retry at most, since a miss only costs running the stage. */
const LOOKUP_RETRIES = 1;

/**
 * The team's cache (the control plane's trusted entries of this repository) as the
 * engine's second, read-only stage cache for `fluksio run --remote-cache`. An entry is
 * taken only when its key inputs give the very key asked for (or, for a traced stage's
 * candidates, the very manifest key) and its outs are exactly the outs and metrics files its
 * key inputs declare — so an entry cannot write a path its stage does not produce (say, a
 * script a later stage runs): whatever the control plane answers, a lookup here is never
 * looser than one in the local store. "Why it re-ran" compares with this store's own
 * previous run, never the team's. A cache that cannot answer is a miss, never a failed run.
 */
export class TeamStageCache implements StageCache {
  /** The series of each entry's stage, by cache key, as the control plane sent them. */
  private readonly points = new Map<string, Promise<MetricPoint[]>>();
  private unavailable = false;

  constructor(private readonly options: TeamStageCacheOptions) {}

  async lookup(key: string): Promise<CacheEntry | null> {
    const hit = await this.ask(() => this.options.client.entry(key, { retries: LOOKUP_RETRIES }), null);
    if (!hit || hit.entry.key !== key || cacheKeyOf(hit.entry.keyInputs) !== key) return null;
    if (!this.outsDeclared(hit.entry)) return null;
    this.points.set(key, Promise.resolve(hit.points));
    return hit.entry;
  }

  async candidates(manifestKey: string): Promise<CacheEntry[]> {
    const entries = await this.ask(
      () => this.options.client.candidates(manifestKey, { retries: LOOKUP_RETRIES }),
      [],
    );
    return entries.filter(
      (entry) =>
        entry.keyInputs.readSet !== null &&
        manifestKeyOf(entry.keyInputs) === manifestKey &&
        cacheKeyOf(entry.keyInputs) === entry.key &&
        this.outsDeclared(entry),
    );
  }

  previous(): Promise<PreviousStage | null> {
    return Promise.resolve(null);
  }

  /**
   * The series the stage of `key`'s entry streamed in the team's run, for a stage restored
   * from it (asked for when a traced stage's candidate was restored). Empty when unknown.
   */
  pointsOf(key: string): Promise<MetricPoint[]> {
    let found = this.points.get(key);
    if (!found) {
      found = this.ask(() => this.options.client.entry(key, { retries: LOOKUP_RETRIES }), null).then((hit) =>
        hit?.entry.key === key ? hit.points : [],
      );
      this.points.set(key, found);
    }
    return found;
  }

  /**
   * Whether the entry's outs are its key inputs' outs and metrics files, each once (the
   * engine stores one out per declared path, keyed by that path normalized); else warns.
   */
  private outsDeclared(entry: CacheEntry): boolean {
    const sent = entry.outs.map((out) => normalizePipelinePath(out.path)).sort();
    const declared = [...entry.keyInputs.outs, ...entry.keyInputs.metrics].map(normalizePipelinePath).sort();
    if (sent.length === declared.length && sent.every((path, at) => path === declared[at])) return true;
    this.options.warn(
      `the team's cache entry of stage ${JSON.stringify(entry.stage)} (run ${JSON.stringify(entry.runId)}) is not used: its outputs ${list(sent)} are not the outputs its key declares, ${list(declared)}`,
    );
    return false;
  }

  private async ask<T>(request: () => Promise<T>, miss: T): Promise<T> {
    if (this.unavailable) return miss;
    try {
      return await request();
    } catch (error) {
      if (!this.unavailable) {
        this.unavailable = true;
        this.options.onUnavailable(error);
      }
      return miss;
    }
  }
}

function list(paths: string[]): string {
  return paths.length === 0 ? '(none)' : paths.map((path) => JSON.stringify(path)).join(', ');
}

/**
 * What `fluksio verify` found for one cached stage, having re-executed it in a scratch
 * checkout on the inputs its cache entry was made from:
 * - `deterministic`: the same key inputs, the same bytes;
 * - `nondeterministic`: the same key inputs, other bytes, and other again on a second
 *   execution (the stage itself varies: time, randomness, ordering);
 * - `stale`: the entry would be served for a result a fresh run of this tree does not
 *   produce — the key inputs recomputed here differ from those the entry claims, or a
 *   fresh execution makes the same bytes twice and they are not the cached ones (an input
 *   the key does not cover, or an altered entry);
 * - `unverifiable`: it could not be compared (the re-execution failed, an upstream out is
 *   gone from the store, this machine's fingerprint differs from the entry's).
 */
export type VerifyVerdict = 'deterministic' | 'nondeterministic' | 'stale' | 'unverifiable';

/** An out (or metrics file) whose bytes differ from those the cache entry holds. */
export interface OutDifference {
  path: string;
  /** The digest the cache entry holds. */
  cached: string;
  /** The digest the fresh execution made; null when it made nothing at that path. */
  fresh: string | null;
  /** The digest a second execution made, when there was one. */
  again?: string | null;
  /** For a directory out: the files inside that differ (at most a few, then a count). */
  files?: string[];
}

export interface StageVerification {
  stage: string;
  verdict: VerifyVerdict;
  /** The key the run used, under which the cache holds the entry. */
  cacheKey: string;
  /** The run whose execution made the entry. */
  entryRun: string;
  /** One sentence each: a key input that differs, what made it unverifiable, a note. */
  findings: string[];
  outs: OutDifference[];
  /** Metric values that differ, as `loss 0.25 → 0.26` (cached → fresh). */
  metrics: string[];
  /** Times the stage was executed here: 1, or 2 when its first bytes differed. */
  executions: number;
  durationMs: number;
}

/** A stage of the run that `fluksio verify` did not re-execute, and why. */
export interface StageNotVerified {
  stage: string;
  why: string;
}

/** What `fluksio verify RUN --json` prints. */
export interface VerifyReport {
  run: string;
  commit: string;
  /** Stages verified, in the order the run recorded them. */
  stages: StageVerification[];
  notVerified: StageNotVerified[];
  /** True when every verified stage is deterministic. */
  ok: boolean;
}

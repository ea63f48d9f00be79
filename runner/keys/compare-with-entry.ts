import type { CacheEntry } from '../../schemas/cache-entry.js';
import type { KeyInputs } from '../../schemas/key-inputs.js';
import type { DirManifest, OutRecord } from '../../schemas/out-record.js';
import type { OutDifference } from '../../schemas/stage-verification.js';
import { cacheKeyOf } from './cache-key.js';
import { rerunReasons } from './rerun-reasons.js';

/** What a fresh execution of a stage produced: its key and its outputs. */
export interface FreshResult {
  cacheKey: string | null;
  keyInputs: KeyInputs | null;
  outs: readonly OutRecord[];
  metrics: Readonly<Record<string, number>>;
}

export interface EntryComparison {
  /**
   * Why the key inputs recomputed here are not those the entry claims, one sentence
   * each (`train.py changed`, `lr 0.01 → 0.1`: claimed → recomputed); empty when they are.
   */
  keyDifferences: string[];
  /** Outs whose bytes differ from the entry's. */
  outs: OutDifference[];
  /** Metric values that differ, `loss 0.25 → 0.26` (cached → fresh). */
  metrics: string[];
}

export interface CompareContext {
  /** For a dep produced by a stage of the pipeline: that stage's name. */
  producerOf(dep: string): string | null;
  /** The code files that differ between the entry's code manifest and the fresh one, when both could be read. */
  codeChanges: string[] | null;
}

/**
 * Compares a stage's cache entry with a fresh execution of the stage (`fluksio verify`):
 * whether the fresh key inputs are those the entry claims — the entry is also checked
 * against its own key, so an entry whose stored inputs were altered shows up — and
 * which outs and metric values differ. Pure: reading blobs is the caller's.
 */
export function compareWithEntry(
  entry: CacheEntry,
  fresh: FreshResult,
  context: CompareContext,
): EntryComparison {
  return {
    keyDifferences: keyDifferences(entry, fresh, context),
    outs: outDifferences(entry.outs, fresh.outs),
    metrics: metricDifferences(entry.metrics, fresh.metrics),
  };
}

function keyDifferences(entry: CacheEntry, fresh: FreshResult, context: CompareContext): string[] {
  if (fresh.keyInputs === null || fresh.cacheKey === null)
    return ['the fresh execution computed no cache key'];
  const claimedKey = cacheKeyOf(entry.keyInputs);
  if (fresh.cacheKey === entry.key && claimedKey === entry.key) return [];
  if (claimedKey === fresh.cacheKey) {
    return [`the entry is stored under key ${entry.key}, which its own key inputs do not hash to`];
  }
  return rerunReasons(
    fresh.keyInputs,
    { runId: entry.runId, keyInputs: entry.keyInputs },
    {
      producerOf: context.producerOf,
      ranUpstream: new Set(),
      codeChanges: context.codeChanges,
    },
  );
}

/**
 * The outs of `expected` whose digest in `actual` differs or is missing, as
 * `{path, cached, fresh}` (the expected digest is `cached`).
 */
export function outDifferences(
  expected: readonly OutRecord[],
  actual: readonly OutRecord[],
): OutDifference[] {
  const actualByPath = new Map(actual.map((out) => [out.path, out.digest]));
  return expected.flatMap((out) => {
    const fresh = actualByPath.get(out.path) ?? null;
    return fresh === out.digest ? [] : [{ path: out.path, cached: out.digest, fresh }];
  });
}

/** Metric values that differ between two executions, `name before → after` (`–` for absent). */
export function metricDifferences(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const show = (value: number | undefined) => (value === undefined ? '–' : String(value));
  return names.flatMap((name) =>
    Object.is(before[name], after[name]) ? [] : [`${name} ${show(before[name])} → ${show(after[name])}`],
  );
}

/**
 * The files of two stored directory outs that differ (changed, added or removed), at
 * most `limit` named, the rest counted: `['model/weights.bin', 'and 3 more files']`.
 */
export function differingFiles(cached: DirManifest, fresh: DirManifest, limit = 5): string[] {
  const key = (file: DirManifest['files'][number]) => `${file.digest}:${file.executable}`;
  const before = new Map(cached.files.map((file) => [file.path, key(file)]));
  const after = new Map(fresh.files.map((file) => [file.path, key(file)]));
  const paths = [...new Set([...before.keys(), ...after.keys()])]
    .filter((path) => before.get(path) !== after.get(path))
    .sort();
  if (paths.length <= limit) return paths;
  const rest = paths.length - limit;
  return [...paths.slice(0, limit), `and ${rest} more ${rest === 1 ? 'file' : 'files'}`];
}

import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import type { CacheEntry } from '../schemas/cache-entry.js';
import type { MetricPoint } from '../schemas/metric-point.js';
import type { PreviousStage } from '../schemas/previous-stage.js';
import { isCacheable } from '../schemas/stage-record.js';
import type { Run } from '../schemas/tables/runs.js';
import { runFromJson } from '../store/runs/run-from-json.js';
import { LocalIndex, type IndexedCacheEntry } from './local-index.js';
import { readRunJournal } from './read-run-journal.js';
import { journalFileOf } from './run-journal.js';

/** What the index should hold, as the journals say. */
export interface JournalIndex {
  /** Cache key → the newest entry written for it, with its stage's points. */
  cache: Map<string, IndexedCacheEntry>;
  /** Succeeded runs, oldest first. */
  succeeded: Run[];
  /** By pipeline path, then stage: the key inputs of the stage's newest record, and its run. */
  previous: Map<string, Map<string, PreviousStage>>;
  /** Runs whose journal was read. */
  runs: number;
  /** Runs whose journal has no final line: interrupted (or running now). */
  unfinished: string[];
  /** Damaged journal lines, by file and line. */
  damaged: string[];
}

/**
 * Reads every run journal, oldest run first, into what the index derives from them: the
 * cache entries their stages' finish events wrote (a later one replacing an earlier of the
 * same key) and their succeeded runs. An entry's time is its stage's finish.
 */
export async function indexFromJournals(journalDir: string): Promise<JournalIndex> {
  const names = (await readdir(journalDir).catch((): string[] => []))
    .filter((name) => name.endsWith('.jsonl'))
    .sort();
  const built: JournalIndex = {
    cache: new Map(),
    succeeded: [],
    previous: new Map(),
    runs: 0,
    unfinished: [],
    damaged: [],
  };
  for (const name of names) {
    const runId = name.slice(0, -'.jsonl'.length);
    const journal = await readRunJournal(journalFileOf(journalDir, runId));
    if (journal.damage) built.damaged.push(journal.damage);
    const [first, ...rest] = journal.records;
    if (first?.type !== 'run.created' || first.run.id !== runId) continue;
    built.runs += 1;
    const points: MetricPoint[] = [];
    let finished = false;
    for (const record of rest) {
      if (record.type === 'run.finished') {
        finished = true;
        if (record.status !== 'succeeded') continue;
        const run = runFromJson(first.run);
        built.succeeded.push({
          ...run,
          status: record.status,
          statusReason: record.reason,
          metrics: record.metrics,
          ...(record.dirtyReasons.length > 0 ? { dirty: true, dirtyReasons: record.dirtyReasons } : {}),
          finishedAt: new Date(record.finishedAt),
        });
        continue;
      }
      if (record.type !== 'run.events') continue;
      for (const event of record.events) {
        if (event.type === 'metric.points') points.push(...event.points);
        if (event.type !== 'stage.finished') continue;
        const { stage } = event;
        if (stage.keyInputs !== null) {
          const pipelinePath = String(first.run.pipelinePath);
          const ofPipeline = built.previous.get(pipelinePath) ?? new Map<string, PreviousStage>();
          ofPipeline.set(stage.name, { runId, keyInputs: stage.keyInputs });
          built.previous.set(pipelinePath, ofPipeline);
        }
        if (!isCacheable(stage)) continue;
        if (stage.cacheKey === null || stage.keyInputs === null) continue;
        const entry: CacheEntry = {
          key: stage.cacheKey,
          stage: stage.name,
          runId,
          outs: stage.outs,
          metrics: stage.metrics,
          keyInputs: stage.keyInputs,
          createdAt: stage.finishedAt ?? new Date(0).toISOString(),
        };
        built.cache.set(stage.cacheKey, {
          entry,
          points: points.filter((point) => point.stage === stage.name),
        });
      }
    }
    if (!finished) built.unfinished.push(runId);
  }
  return built;
}

/**
 * Writes the index the journals say into a new folder, then puts it in place of
 * `indexDir`: the index is derived data, so the old one is dropped. The caller holds the
 * store's lock (no run writes meanwhile).
 */
export async function rebuildLocalIndex(indexDir: string, built: JournalIndex): Promise<void> {
  const suffix = randomBytes(6).toString('hex');
  const fresh = new LocalIndex(`${indexDir}.rebuilding-${suffix}`);
  try {
    await mkdir(fresh.root, { recursive: true });
    // Oldest first, so a manifest key's newest entries end up first among its candidates.
    const entries = [...built.cache.values()].sort((a, b) =>
      a.entry.createdAt.localeCompare(b.entry.createdAt),
    );
    for (const indexed of entries) await fresh.recordCacheEntry(indexed);
    for (const run of built.succeeded) await fresh.recordSucceededRun(run);
    for (const [pipelinePath, ofPipeline] of built.previous) {
      for (const [stage, previous] of ofPipeline)
        await fresh.recordPreviousStage(pipelinePath, stage, previous);
    }
    const old = `${indexDir}.old-${suffix}`;
    await rename(indexDir, old).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rename(fresh.root, indexDir);
    await rm(old, { recursive: true, force: true });
  } finally {
    await rm(fresh.root, { recursive: true, force: true });
  }
}

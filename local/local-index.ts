import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import pLimit from 'p-limit';
import { z } from 'zod';
import { CacheEntry } from '../schemas/cache-entry.js';
import { sha256Hex } from '../core/canonical-json.js';
import { CANDIDATE_LIMIT, manifestKeyOf } from '../core/manifest-key.js';
import { MetricPoint } from '../schemas/metric-point.js';
import { PreviousStage } from '../schemas/previous-stage.js';
import type { Run } from '../schemas/tables/runs.js';
import { runFromJson } from '../store/runs/run-from-json.js';
import { ONE_SHOT_PARSE } from '../schemas/one-shot-parse.js';

/** A cache entry as the index keeps it: with the points its stage streamed in the run that made it. */
export const IndexedCacheEntry = z.strictObject({ entry: CacheEntry, points: z.array(MetricPoint) });
export type IndexedCacheEntry = z.infer<typeof IndexedCacheEntry>;

/**
 * The small file index of a local store (`.fluksio/index/`) that `fluksio run` reads and
 * writes instead of the embedded database, each answer one file whatever the history:
 * `cache/<key>.json` (the entry and its stage's points, for a cached stage's series),
 * `candidates/<manifest key>.json` (the keys of a traced stage's newest entries, whose read
 * sets a lookup checks), `previous/<pipeline>/<stage>.json` (the stage's key inputs in the newest run of the
 * pipeline that computed them, to say why it re-ran), and
 * `baseline/<pipeline>/<commit>/` (the newest succeeded run per params, and of all).
 * It is derived from the run journals and rebuilt from them by `fluksio doctor --repair`;
 * files are written whole and renamed into place, and one that does not read back is a
 * miss, so a torn file can cost a cache hit but never restore a wrong one.
 */
export class LocalIndex {
  private readonly read = new Map<string, Promise<IndexedCacheEntry | null>>();
  /**
   * The runs of a parallel sweep record into one index at once: a manifest key's list is
   * read, changed and written one update at a time, so no entry is lost between two.
   */
  private readonly candidateUpdates = pLimit(1);

  constructor(readonly root: string) {}

  /** The entry of `key` with its points, or null. */
  cacheEntry(key: string): Promise<IndexedCacheEntry | null> {
    let found = this.read.get(key);
    if (!found) {
      found = readJson(this.cachePath(key)).then((json) => {
        const parsed = IndexedCacheEntry.safeParse(json, ONE_SHOT_PARSE);
        return parsed.success && parsed.data.entry.key === key ? parsed.data : null;
      });
      this.read.set(key, found);
    }
    return found;
  }

  /** The stage's key inputs in the newest run of the pipeline that recorded them, or null. */
  async previousStage(pipelinePath: string, stage: string): Promise<PreviousStage | null> {
    const parsed = PreviousStage.safeParse(
      await readJson(this.previousPath(pipelinePath, stage)),
      ONE_SHOT_PARSE,
    );
    return parsed.success ? parsed.data : null;
  }

  /** Records a stage's key inputs as the newest of its pipeline's runs. */
  async recordPreviousStage(pipelinePath: string, stage: string, previous: PreviousStage): Promise<void> {
    await writeJson(this.previousPath(pipelinePath, stage), previous);
  }

  /**
   * The entries of a traced stage's manifest key, newest first and at most
   * CANDIDATE_LIMIT: a lookup restores the first whose read set still holds.
   */
  async candidates(manifestKey: string): Promise<CacheEntry[]> {
    const parsed = z.array(z.string()).safeParse(await readJson(this.candidatesPath(manifestKey)));
    if (!parsed.success) return [];
    const entries = await Promise.all(parsed.data.map((key) => this.cacheEntry(key)));
    return entries.flatMap((indexed) => (indexed ? [indexed.entry] : []));
  }

  /** Records a cache entry: the answer for its key, and for a traced one its manifest key's newest. */
  async recordCacheEntry(indexed: IndexedCacheEntry): Promise<void> {
    const { entry } = indexed;
    this.read.delete(entry.key);
    await writeJson(this.cachePath(entry.key), indexed);
    if (entry.keyInputs.readSet === null) return;
    const path = this.candidatesPath(manifestKeyOf(entry.keyInputs));
    await this.candidateUpdates(async () => {
      const known = z.array(z.string()).safeParse(await readJson(path));
      const keys = [entry.key, ...(known.success ? known.data : []).filter((key) => key !== entry.key)];
      await writeJson(path, keys.slice(0, CANDIDATE_LIMIT));
    });
  }

  /**
   * The baseline of DESIGN §7 among the runs recorded here: a succeeded run of the pipeline
   * at the first of `commits` (nearest first) that has one, preferring equal params, then
   * the newest.
   */
  async baseline(query: {
    pipelinePath: string;
    commits: readonly string[];
    paramsDigest: string;
  }): Promise<Run | null> {
    const pipelineDir = this.baselineDir(query.pipelinePath);
    const recorded = new Set(await readdir(pipelineDir).catch((): string[] => []));
    const commit = query.commits.find((each) => recorded.has(each));
    if (commit === undefined) return null;
    for (const name of [nameOf(query.paramsDigest), 'newest']) {
      const json = await readJson(join(pipelineDir, commit, `${name}.json`));
      if (json !== null && typeof json === 'object') return runFromJson(json as Record<string, unknown>);
    }
    return null;
  }

  /**
   * Records a succeeded run as its commit's newest, for its params and of all. A dirty run
   * is not recorded: uncommitted code is never another run's baseline (`fluksio diff RUN
   * DIRTY` still compares with one when asked).
   */
  async recordSucceededRun(run: Run): Promise<void> {
    if (run.dirty || run.commit === null || !/^[0-9a-f]+$/.test(run.commit)) return;
    const commitDir = join(this.baselineDir(run.pipelinePath), run.commit);
    await writeJson(join(commitDir, `${nameOf(run.paramsDigest)}.json`), run);
    await writeJson(join(commitDir, 'newest.json'), run);
  }

  private candidatesPath(manifestKey: string): string {
    return join(this.root, 'candidates', `${nameOf(manifestKey)}.json`);
  }

  private cachePath(key: string): string {
    return join(this.root, 'cache', `${nameOf(key)}.json`);
  }

  private previousPath(pipelinePath: string, stage: string): string {
    return join(this.root, 'previous', nameOf(pipelinePath), `${nameOf(stage)}.json`);
  }

  private baselineDir(pipelinePath: string): string {
    return join(this.root, 'baseline', nameOf(pipelinePath));
  }
}

/** A file name for any string: its hash, so no name can climb out of its folder. */
function nameOf(text: string): string {
  return sha256Hex(text).slice(0, 40);
}

async function readJson(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.tmp-${randomBytes(6).toString('hex')}`;
  try {
    await writeFile(temp, JSON.stringify(value));
    await rename(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
}

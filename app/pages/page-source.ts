import type {
  LogChunk,
  LogCursor,
  RunListPageData,
  RunPageData,
  RunsPageData,
  SeriesRangeData,
} from '../../schemas/page-data.js';
import type { Readable } from 'node:stream';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import type { RunListFilter } from '../../store/runs/list-repository-runs.js';

/** A read of a stage's log: its lines from a cursor, where the next read starts, and whether this is all there will be. */
export type StageLogRead = LogChunk & { next: LogCursor; final: boolean };

/** A file output of a run whose blob is stored: where the run wrote it, its recorded size, and its bytes (unverified). */
export interface StoredOut {
  /** As the pipeline declares it (`models/model.pt`). */
  path: string;
  size: number;
  open(): Promise<Readable>;
}

/**
 * Where the pages read runs from: a control plane's database (storePageSource) or a
 * project's embedded store (`fluksio ui`). Every answer is null for a run or group that
 * does not exist, and `repositoryOf` lets the routes check access before reading more.
 */
export interface PageSource {
  /** The repository a run belongs to, or null for an unknown run. */
  repositoryOfRun(runId: string): Promise<string | null>;
  /** The repository of a sweep's runs, or null for an unknown group. */
  repositoryOfGroup(groupId: string): Promise<string | null>;
  /** A run's page data; with `buckets`, each series cut down to a chart that many pixels wide. */
  runPage(runId: string, buckets?: number): Promise<RunPageData | null>;
  /**
   * A running run's state for a page holding its series up to `held` (name → last step):
   * `partial`, with only the points past those held, and no baseline series; the whole
   * page cut down to `buckets` instead when a series has more than twice that many new points.
   */
  runUpdate(runId: string, held: ReadonlyMap<string, number>, buckets: number): Promise<RunPageData | null>;
  /** One series of a run, and its baseline's, between two steps, cut down to `buckets` pixels. */
  seriesRange(
    runId: string,
    name: string,
    range: { from: number; to: number },
    buckets: number,
  ): Promise<SeriesRangeData | null>;
  /**
   * A piece of a stage's log from `cursor` (at most a few thousand lines, so a long log
   * reaches the page in pieces it can show at once); `final` once the run is over and
   * this piece ends the log. Null when the run has no such stage.
   */
  stageLog(runId: string, stage: string, cursor: LogCursor): Promise<StageLogRead | null>;
  groupPage(groupId: string): Promise<RunsPageData | null>;
  /**
   * The file output of a run's stage with this digest, when its blob is stored here and
   * readable by the run's repository; null otherwise (a directory's manifest is no file).
   */
  outBlob(runId: string, digest: BlobDigest): Promise<StoredOut | null>;
  /** The named runs, in the order given; null when one of them does not exist. */
  comparePage(runIds: readonly string[]): Promise<RunsPageData | null>;
  /** A page of a repository's runs, newest first, before the run `before`. */
  runList(filter: RunListFilter, before: string | undefined, limit: number): Promise<RunListPageData>;
  /** The repository a list shows when none is named: the project's own locally; null on a server. */
  defaultRepository: string | null;
}

import { and, eq } from 'drizzle-orm';
import type { PageSource } from '../../app/pages/page-source.js';
import { storePageSource } from '../../app/pages/store-page-source.js';
import { stages } from '../../schemas/tables/stages.js';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import { liveStageLogFile } from '../../local/live-stage-logs.js';
import { localStorePaths } from '../../local/local-store-paths.js';
import { baselineOf, type ProjectStore } from '../../local/open-project-store.js';
import { logPieceOf, readLiveLogPiece } from '../../local/read-log-piece.js';
import { syncLocalJournal } from '../../local/sync-local-journal.js';

/** How stale the pages' view of a running run may be: the journals are read again after this. */
const SYNC_EVERY_MS = 100;
/** Stored logs kept in memory while a page reads them in pieces. */
const CACHED_LOGS = 4;

/**
 * The pages' reads on a project's embedded store (`fluksio ui`): a stage's log is the blob
 * its run stored when the stage ended, or, while it runs in another `fluksio run`, the live
 * file that run writes (the same bytes: a page goes on from the same offset); positions
 * are byte offsets. Before each read the database takes what the run journals gained, so
 * a running run's page follows it. The baseline is the nearest first-parent ancestor's,
 * and the goals are the pipeline's.
 */
export function localPageSource(store: ProjectStore): PageSource {
  const { db, blobs } = store.state;
  const paths = localStorePaths(store.project.stateDir);
  const cachedLogs = new Map<string, Buffer>();
  let synced = 0;
  let syncing: Promise<unknown> | null = null;
  const catchUp = (): Promise<unknown> => {
    if (syncing) return syncing;
    if (Date.now() - synced < SYNC_EVERY_MS) return Promise.resolve();
    syncing = syncLocalJournal(db, paths.journalDir).finally(() => {
      synced = Date.now();
      syncing = null;
    });
    return syncing;
  };
  const storedLog = async (digest: string): Promise<Buffer> => {
    let bytes = cachedLogs.get(digest);
    if (!bytes) {
      bytes = await blobs.getBytes(digest as BlobDigest);
      cachedLogs.set(digest, bytes);
      if (cachedLogs.size > CACHED_LOGS) cachedLogs.delete(cachedLogs.keys().next().value!);
    }
    return bytes;
  };
  const source = storePageSource({
    db,
    async readStageLog(run, stage, position, maxLines) {
      const [record] = await db
        .select({ logDigest: stages.logDigest })
        .from(stages)
        .where(and(eq(stages.runId, run.id), eq(stages.name, stage)));
      if (!record) return null;
      if (record.logDigest) return logPieceOf(await storedLog(record.logDigest), position, maxLines, true);
      return readLiveLogPiece(liveStageLogFile(paths.liveDir, run.id, stage), position, maxLines);
    },
    openBlob: async (_run, digest) => {
      const stream = await blobs.openRead(digest);
      return stream && (async () => stream);
    },
    baselineOf: (run) => baselineOf(store, run),
    goalsOf: () => store.goals,
    defaultRepository: 'local',
  });
  return {
    ...source,
    runPage: async (runId, buckets) => {
      await catchUp();
      return source.runPage(runId, buckets);
    },
    runUpdate: async (runId, held, buckets) => {
      await catchUp();
      return source.runUpdate(runId, held, buckets);
    },
    stageLog: async (runId, stage, cursor) => {
      await catchUp();
      return source.stageLog(runId, stage, cursor);
    },
  };
}

import type { Database } from '../../store/db/database.js';
import { readStageLogChunk } from '../../store/runs/read-stage-log-chunk.js';
import type { PageSource } from './page-source.js';
import { storePageSource } from './store-page-source.js';

/**
 * The pages' reads on a control plane: logs from the runners' `stage.log` rows, goals as
 * each run recorded them. The baseline is not looked up here: on a control plane it
 * depends on GitHub's commit graph (outbox-baseline.ts), which the pages do not call.
 */
export function controlPlanePageSource(db: Database): PageSource {
  return storePageSource({
    db,
    readStageLog: async (run, stage, fromSeq, maxLines) => {
      const read = await readStageLogChunk({ db, runId: run.id, stage, fromSeq, maxLines });
      return read && { lines: read.lines, next: read.nextSeq, atEnd: read.atEnd };
    },
    baselineOf: async () => null,
    goalsOf: (run) => run.metricGoals,
  });
}

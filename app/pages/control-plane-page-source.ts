import type { Database } from '../../store/db/database.js';
import { getBaselineRun } from '../../store/runs/get-baseline-run.js';
import { readStageLogChunk } from '../../store/runs/read-stage-log-chunk.js';
import type { PageSource } from './page-source.js';
import { storePageSource } from './store-page-source.js';

/**
 * The pages' reads on a control plane: logs from the runners' `stage.log` rows, goals as
 * each run recorded them, and the baseline the run fixed when it finished (the check run
 * compared it with that one; the pages never look up a newer one, which would need
 * GitHub's commit graph). An unfinished run has no baseline on its page yet.
 */
export function controlPlanePageSource(db: Database): PageSource {
  return storePageSource({
    db,
    readStageLog: async (run, stage, fromSeq, maxLines) => {
      const read = await readStageLogChunk({ db, runId: run.id, stage, fromSeq, maxLines });
      return read && { lines: read.lines, next: read.nextSeq, atEnd: read.atEnd };
    },
    baselineOf: (run) => getBaselineRun({ db, run }),
    goalsOf: (run) => run.metricGoals,
  });
}

import type { Database } from '../../store/database.js';
import { getStageLog } from '../../store/get-stage-log.js';
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
    readStageLog: (run, stage) => getStageLog({ db, runId: run.id, stage }),
    baselineOf: async () => null,
    goalsOf: (run) => run.metricGoals,
  });
}

import type { PageSource } from '../../app/pages/page-source.js';
import { storePageSource } from '../../app/pages/store-page-source.js';
import { getRunDetail } from '../../store/runs/get-run-detail.js';
import { baselineOf, type ProjectStore } from '../../local/open-project-store.js';

/**
 * The pages' reads on a project's embedded store (`fluksio ui`): a stage's log is the blob
 * its run stored when the stage ended (a lone `\r` keeps a progress bar's states on one
 * line, as the page shows it), the baseline is the nearest first-parent ancestor's, and
 * the goals are the pipeline's.
 */
export function localPageSource(store: ProjectStore): PageSource {
  const { db, blobs } = store.state;
  return storePageSource({
    db,
    async readStageLog(run, stage) {
      const detail = await getRunDetail({ db, runId: run.id });
      const record = detail?.stages.find((each) => each.name === stage);
      if (!record) return null;
      if (!record.logDigest) return [];
      const text = (await blobs.getBytes(record.logDigest)).toString('utf8');
      const lines = text.split('\n');
      if (lines.at(-1) === '') lines.pop();
      return lines;
    },
    baselineOf: (run) => baselineOf(store, run),
    goalsOf: () => store.goals,
    defaultRepository: 'local',
  });
}

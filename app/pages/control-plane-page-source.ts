import type { Database } from '../../store/db/database.js';
import { hasBlobRef } from '../../store/blobs/has-blob-ref.js';
import type { BlobByteCounters } from '../blobs/blob-byte-counters.js';
import type { BlobStorage } from '../blobs/blob-storage.js';
import { getBaselineRun } from '../../store/runs/get-baseline-run.js';
import { readStageLogChunk } from '../../store/runs/read-stage-log-chunk.js';
import type { PageSource } from './page-source.js';
import { storePageSource } from './store-page-source.js';

/**
 * The pages' reads on a control plane: logs from the runners' `stage.log` rows, goals as
 * each run recorded them, and the baseline the run fixed when it finished (the check run
 * compared it with that one; the pages never look up a newer one, which would need
 * GitHub's commit graph). An unfinished run has no baseline on its page yet. Outputs are
 * read from the control plane's blob store.
 */
export function controlPlanePageSource({
  db,
  blobs,
  blobBytes,
}: {
  db: Database;
  blobs: BlobStorage;
  /** Counts the downloads' bytes (`direction="out"`). */
  blobBytes: BlobByteCounters;
}): PageSource {
  return storePageSource({
    db,
    // A digest an output names opens nothing by itself (a runner may report any digest):
    // the bytes must have been uploaded by a run of this repository, as for `fluksio pull`.
    openBlob: async (run, digest) =>
      (await hasBlobRef({ db, repository: run.repository, digest })) && (await blobs.size(digest)) !== null
        ? async () => blobBytes.count(await blobs.openRead(digest), 'out')
        : null,
    readStageLog: async (run, stage, fromSeq, maxLines) => {
      const read = await readStageLogChunk({ db, runId: run.id, stage, fromSeq, maxLines });
      return read && { lines: read.lines, next: read.nextSeq, atEnd: read.atEnd };
    },
    baselineOf: (run) => getBaselineRun({ db, run }),
    goalsOf: (run) => run.metricGoals,
  });
}

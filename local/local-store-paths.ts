import { dirname, join } from 'node:path';

/** Where the parts of a store live under a pipeline's `.fluksio/`. */
export function localStorePaths(stateDir: string): {
  journalDir: string;
  indexDir: string;
  blobDir: string;
  databaseDir: string;
  liveDir: string;
  stageGroupsDir: string;
} {
  return {
    journalDir: join(stateDir, 'journal'),
    indexDir: join(stateDir, 'index'),
    blobDir: join(stateDir, 'blobs'),
    databaseDir: join(stateDir, 'db'),
    /** `<run>/<stage>.log`: what a running run's stages printed so far, for `fluksio ui`. */
    liveDir: join(stateDir, 'live'),
    /** `<run>/<pid>.json`: the process groups of a running run's stages (stage-groups.ts). */
    stageGroupsDir: join(stateDir, 'stage-groups'),
  };
}

/** Where a run of the store whose journal is in `journalDir` records its stages' process groups. */
export function runStageGroupsDir(journalDir: string, runId: string): string {
  return join(localStorePaths(dirname(journalDir)).stageGroupsDir, runId);
}

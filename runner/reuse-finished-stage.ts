import { normalizePipelinePath } from '../core/pipeline/pipeline-paths.js';
import type { StageRecord } from '../schemas/stage-record.js';
import { isStageSuccess } from '../schemas/statuses.js';
import { restoreOut } from './blobs/stage-outputs.js';
import type { StageResult, StageRunContext } from './stage-run-context.js';

/**
 * Takes a stage that finished earlier in the same attempt (before its runner was
 * restarted, resume-run.ts) as it was recorded, reporting nothing: its record, its log
 * lines and its annotations are already the control plane's, and a stage run again would
 * repeat what it did (a `cache: false` deploy step twice) and replace its record. A
 * successful stage's outs are put back from the blob store, as downstream stages read
 * them; null when one cannot be, and the stage is then executed as any other.
 */
export async function reuseFinishedStage(
  record: StageRecord,
  context: StageRunContext,
): Promise<StageResult | null> {
  const { options } = context;
  if (isStageSuccess(record.status)) {
    try {
      for (const out of record.outs) {
        await restoreOut(options.blobs, options.workspace.pipelineDir, options.workspace.repoRoot, out);
      }
    } catch {
      return null;
    }
    for (const out of record.outs) context.produced.set(normalizePipelinePath(out.path), out);
    if (record.status === 'ran') context.ranUpstream.add(record.name);
  }
  return { record, annotations: [], tracebacks: [], runDirty: record.dirtyReasons };
}

import { dvcParamLocation } from '../../core/dvc/dvc-params-overlay.js';
import { normalizePipelinePath } from '../../core/pipeline/pipeline-paths.js';
import type { Pipeline } from '../../schemas/pipeline.js';

/**
 * The DVC params files the runner itself writes a stage's values into and puts back while
 * that stage runs (overlayDvcParamsFiles), for any stage of the pipeline, pipeline-relative:
 * their content is checked, not their stamp. The overlay's lock keeps another stage's
 * values from being read, and with `--jobs 2` one stage's overlay may come and go while
 * another waits.
 */
export function dvcOverlaidFiles(pipeline: Pipeline): Set<string> {
  if (!pipeline.dvc_params) return new Set();
  const listed = Object.values(pipeline.stages).flatMap((each) => each.params);
  return new Set(listed.map((name) => normalizePipelinePath(dvcParamLocation(name).file)));
}

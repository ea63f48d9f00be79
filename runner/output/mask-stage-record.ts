import type { MetricPoint } from '../../schemas/metric-point.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import type { Masker } from './masker.js';

/**
 * A stage's record with every text that can carry what the stage wrote masked, as its log
 * lines are (DESIGN §7): its error and warnings (which quote its metrics and plot files),
 * its notes, and the names of its metrics (a metrics file's keys are the stage's to
 * choose). Numbers, digests and paths from the pipeline are left as they are.
 */
export function maskStageRecord(masker: Masker, record: StageRecord): StageRecord {
  return {
    ...record,
    error: record.error === null ? null : masker.mask(record.error),
    warnings: record.warnings.map((warning) => masker.mask(warning)),
    notes: record.notes.map((note) => masker.mask(note)),
    metrics: Object.fromEntries(
      Object.entries(record.metrics).map(([name, value]) => [masker.mask(name), value]),
    ),
  };
}

/** Points read from a stage's plot files, their series' names (a file's column headers) masked. */
export function maskMetricPoints(masker: Masker, points: readonly MetricPoint[]): MetricPoint[] {
  return points.map((point) => ({ ...point, name: masker.mask(point.name) }));
}

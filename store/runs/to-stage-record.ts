import type { StageRecord } from '../../schemas/stage-record.js';
import type { StageRow } from '../../schemas/tables/stages.js';

/** A stage row as the StageRecord its finish event carried (times as ISO strings). */
export function toStageRecord(row: StageRow): StageRecord {
  return {
    name: row.name,
    status: row.status,
    cacheKey: row.cacheKey,
    keyInputs: row.keyInputs,
    cachedFrom: row.cachedFrom,
    cachedFromTeam: row.cachedFromTeam,
    reasons: row.reasons,
    notes: row.notes,
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    durationMs: row.durationMs,
    exitCode: row.exitCode,
    outs: row.outs,
    metrics: row.metrics,
    logTail: row.logTail,
    logDigest: row.logDigest,
    error: row.error,
    dirtyReasons: row.dirtyReasons,
    warnings: row.warnings,
    usage: row.usage,
    pending: row.pending,
  };
}

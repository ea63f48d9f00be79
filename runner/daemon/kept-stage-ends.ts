import type { RunEvent } from '../../schemas/run-event.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { isStageSuccess } from '../../schemas/statuses.js';

/**
 * The stages a resumed attempt keeps as finished: those the control plane recorded, and
 * those whose end the journal holds unsent (sent first), when it is the stage's own result
 * (succeeded or failed) rather than a stop's doing (cancelled, skipped), which runs again.
 */
export function keptStageEnds(recorded: readonly StageRecord[], unsent: readonly RunEvent[]): StageRecord[] {
  const kept = [...recorded];
  for (const event of unsent) {
    if (event.type !== 'stage.finished' || kept.some((record) => record.name === event.stage.name)) continue;
    if (isStageSuccess(event.stage.status) || event.stage.status === 'failed') kept.push(event.stage);
  }
  return kept;
}

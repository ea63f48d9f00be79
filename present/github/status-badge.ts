import type { RunStatus, StageStatus } from '../../schemas/statuses.js';
import { RUN_BADGES, STAGE_BADGES, type StatusBadge } from '../status-badges.js';

/** `✅ ran`, `♻️ cached`: a stage's status in GitHub markdown. */
export function stageBadge(status: StageStatus): string {
  return emojiBadge(STAGE_BADGES[status]);
}

/** `✅ succeeded`, `❌ failed`: a run's status in GitHub markdown. */
export function runBadge(status: RunStatus): string {
  return emojiBadge(RUN_BADGES[status]);
}

function emojiBadge(badge: StatusBadge): string {
  return `${badge.emoji} ${badge.label}`;
}

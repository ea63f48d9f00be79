import type { RunStatus, StageStatus } from '../schemas/statuses.js';

/**
 * How a status reads, in every presentation: its words, the emoji GitHub's markdown shows,
 * the narrow symbol a terminal shows (an emoji's width varies between terminals, which
 * would break aligned columns), and its tone, which a terminal turns into a colour.
 */
export interface StatusBadge {
  label: string;
  emoji: string;
  symbol: string;
  tone: BadgeTone;
}

/** good: done well; info: done without work; bad: failed; warn: stopped; active: under way; quiet: nothing yet. */
export type BadgeTone = 'good' | 'info' | 'bad' | 'warn' | 'active' | 'quiet';

export const STAGE_BADGES: Readonly<Record<StageStatus, StatusBadge>> = {
  pending: { label: 'pending', emoji: '⏳', symbol: '·', tone: 'quiet' },
  running: { label: 'running', emoji: '▶️', symbol: '▸', tone: 'active' },
  ran: { label: 'ran', emoji: '✅', symbol: '✓', tone: 'good' },
  cached: { label: 'cached', emoji: '♻️', symbol: '●', tone: 'info' },
  failed: { label: 'failed', emoji: '❌', symbol: '✗', tone: 'bad' },
  timed_out: { label: 'timed out', emoji: '⏱️', symbol: '⏱', tone: 'bad' },
  skipped: { label: 'skipped', emoji: '⏭️', symbol: '–', tone: 'quiet' },
  cancelled: { label: 'cancelled', emoji: '🚫', symbol: '⊘', tone: 'warn' },
};

export const RUN_BADGES: Readonly<Record<RunStatus, StatusBadge>> = {
  queued: { label: 'queued', emoji: '⏳', symbol: '·', tone: 'quiet' },
  running: { label: 'running', emoji: '▶️', symbol: '▸', tone: 'active' },
  succeeded: { label: 'succeeded', emoji: '✅', symbol: '✓', tone: 'good' },
  failed: { label: 'failed', emoji: '❌', symbol: '✗', tone: 'bad' },
  cancelled: { label: 'cancelled', emoji: '🚫', symbol: '⊘', tone: 'warn' },
  timed_out: { label: 'timed out', emoji: '⏱️', symbol: '⏱', tone: 'bad' },
  abandoned: { label: 'abandoned', emoji: '⚠️', symbol: '✗', tone: 'bad' },
};

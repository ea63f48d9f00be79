import type { Colors } from 'picocolors/types.js';
import type { RunEventBody } from '../../schemas/run-event.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { formatDuration, short } from '../../core/text/format.js';
import { terminalText } from './terminal-text.js';

const BADGES: Record<StageRecord['status'], { text: string; color: keyof Colors }> = {
  ran: { text: '✓ ran', color: 'green' },
  cached: { text: '● cached', color: 'cyan' },
  failed: { text: '✗ failed', color: 'red' },
  timed_out: { text: '⏱ timed out', color: 'red' },
  cancelled: { text: '⊘ cancelled', color: 'yellow' },
  skipped: { text: '– skipped', color: 'dim' },
  running: { text: '▸ running', color: 'bold' },
  pending: { text: '· pending', color: 'dim' },
};
const BADGE_WIDTH = Math.max(...Object.values(BADGES).map((badge) => badge.text.length));

/** How each stage status reads in a terminal, padded so the columns after it line up. */
export function statusBadge(status: StageRecord['status'], colors: Colors): string {
  const badge = BADGES[status];
  const paint = colors[badge.color] as (text: string) => string;
  return paint(badge.text) + ' '.repeat(BADGE_WIDTH - badge.text.length);
}

/** What a stage's line says after its status: where a hit came from, why a miss ran. */
export function stageDetail(stage: Pick<StageRecord, 'status' | 'cachedFrom' | 'reasons' | 'error'>): string {
  if (stage.status === 'cached') return `from run ${short(stage.cachedFrom, 10)}`;
  if (stage.error && stage.status !== 'ran') return stage.error;
  return stage.reasons.join('; ');
}

/**
 * Shows a run on a terminal as it happens (DESIGN §9): each stage as it starts and ends
 * (ran/cached, duration, and on a miss why), and the stages' own output, prefixed by
 * their name, as it streams. It is an `EventSink` (runner/ports.ts) by its shape, so
 * present/ needs nothing of the runner.
 */
export class ProgressPrinter {
  private readonly width: number;

  constructor(
    private readonly write: (text: string) => void,
    private readonly colors: Colors,
    stageNames: readonly string[],
    private readonly showOutput = true,
  ) {
    this.width = Math.max(...stageNames.map((name) => name.length));
  }

  emit(event: RunEventBody): void {
    const { colors } = this;
    switch (event.type) {
      case 'stage.started':
        this.write(`${colors.bold('▸')} ${colors.bold(event.stage)}\n`);
        break;
      case 'stage.log':
        if (this.showOutput) {
          for (const line of event.lines)
            this.write(`  ${colors.dim(`${event.stage.padEnd(this.width)} │`)} ${terminalText(line)}\n`);
        }
        break;
      case 'stage.finished': {
        const stage = event.stage;
        const detail = stageDetail(stage);
        this.write(
          `${statusBadge(stage.status, colors)} ${colors.bold(stage.name.padEnd(this.width))}  ${formatDuration(stage.durationMs).padStart(7)}${detail ? `  ${colors.dim(detail)}` : ''}\n`,
        );
        break;
      }
      default:
        break;
    }
  }

  async flush(): Promise<void> {}
}

import type { Colors } from 'picocolors/types.js';
import type { RunEventBody } from '../../schemas/run-event.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import { describeJobPending } from '../../core/text/describe-job-pending.js';
import { formatDuration, short } from '../../core/text/format.js';
import { STAGE_BADGES, type BadgeTone, type StatusBadge } from '../status-badges.js';
import { ElapsedTicker } from './elapsed-ticker.js';
import { terminalText } from './terminal-text.js';
import wrapAnsi from 'wrap-ansi';

/** The colour of each badge tone on a terminal. */
const TONE_COLORS: Record<BadgeTone, keyof Colors> = {
  good: 'green',
  info: 'cyan',
  bad: 'red',
  warn: 'yellow',
  active: 'bold',
  quiet: 'dim',
};
const BADGE_WIDTH = Math.max(...Object.values(STAGE_BADGES).map((badge) => terminalBadge(badge).length));

/** How each stage status reads in a terminal, padded so the columns after it line up. */
export function statusBadge(status: StageRecord['status'], colors: Colors): string {
  const badge = STAGE_BADGES[status];
  const text = terminalBadge(badge);
  const paint = colors[TONE_COLORS[badge.tone]] as (text: string) => string;
  return paint(text) + ' '.repeat(BADGE_WIDTH - text.length);
}

/** `✓ ran`: a symbol, not an emoji, whose width every terminal agrees on. */
function terminalBadge(badge: StatusBadge): string {
  return `${badge.symbol} ${badge.label}`;
}

/**
 * What a stage's line says after its status: where a hit came from, why a running stage's
 * job waits in the queue, why a miss ran.
 */
export function stageDetail(
  stage: Pick<StageRecord, 'status' | 'cachedFrom' | 'reasons' | 'error'> &
    Partial<Pick<StageRecord, 'cachedFromTeam' | 'pending'>>,
): string {
  if (stage.status === 'cached') {
    const run = `run ${short(stage.cachedFrom, 10)}`;
    return stage.cachedFromTeam ? `from the team's cache, ${run}` : `from ${run}`;
  }
  if (stage.error && stage.status !== 'ran') return stage.error;
  if (stage.pending) return describeJobPending(stage.pending);
  return stage.reasons.join('; ');
}

/**
 * Shows a run on a terminal as it happens (DESIGN §9): each stage as it starts and ends
 * (ran/cached, duration, and on a miss why), and the stages' own output, prefixed by
 * their name, as it streams. It is an `EventSink` (runner/ports.ts) by its shape, so
 * present/ needs nothing of the runner.
 * With `live` (a terminal), a last line that is redrawn every second says how long the
 * running stages have run (ElapsedTicker), so a silent stage is seen alive; and a line the
 * stage ended with a lone `\r` (a tqdm or Keras bar's state, LineSplitter) is drawn over by
 * the next, cut to the terminal's `columns`, instead of each state scrolling by as a line.
 */
export class ProgressPrinter {
  private readonly width: number;
  private readonly ticker: ElapsedTicker;

  constructor(
    out: (text: string) => void,
    private readonly colors: Colors,
    stageNames: readonly string[],
    private readonly showOutput = true,
    private readonly live = false,
    /** The terminal's width, which a redrawn bar's state must stay within (else 80). */
    private readonly columns = 80,
  ) {
    this.width = Math.max(...stageNames.map((name) => name.length));
    this.ticker = new ElapsedTicker(out, colors, live);
  }

  private write(text: string): void {
    this.ticker.write(text);
  }

  emit(event: RunEventBody): void {
    const { colors } = this;
    switch (event.type) {
      case 'stage.started':
        this.write(`${colors.bold('▸')} ${colors.bold(event.stage)}\n`);
        this.ticker.started(event.stage);
        break;
      case 'stage.log':
        if (this.showOutput) {
          for (const line of event.lines) {
            const text = `  ${colors.dim(`${event.stage.padEnd(this.width)} │`)} ${terminalText(line)}`;
            if (this.live && line.endsWith('\r')) this.ticker.bar(this.cutToWidth(text));
            else this.write(`${text}\n`);
          }
        }
        break;
      case 'stage.finished': {
        const stage = event.stage;
        this.ticker.ended(stage.name);
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

  /**
   * The first line of `text` as the terminal shows it, one column short of its width (a
   * line filling it leaves some terminals' cursor on the next): erasing it erases all of it.
   */
  private cutToWidth(text: string): string {
    if (!Number.isFinite(this.columns)) return text;
    const [first] = wrapAnsi(text, Math.max(1, this.columns - 1), {
      hard: true,
      wordWrap: false,
      trim: false,
    }).split('\n');
    return first ?? '';
  }

  async flush(): Promise<void> {
    this.ticker.stop();
  }
}

import type { Colors } from 'picocolors/types.js';
import { formatDuration } from '../../core/text/format.js';

/** How often the elapsed time of running stages is redrawn on a terminal. */
const TICK_MS = 1000;
/** Erases the terminal's current line and puts the cursor at its start. */
const ERASE_LINE = '\r\u001b[2K';

/**
 * The last line of a terminal that says how long the running stages have run
 * (`▸ running: train 12.0s`), redrawn every second, so a silent stage is seen alive — a
 * local run's (ProgressPrinter) and a followed remote run's alike. Everything else is
 * written through `write`, which erases that line first, so it never stays in the
 * scrollback. Without `live` (a pipe, a log) it only passes text on.
 */
export class ElapsedTicker {
  private readonly running = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  /** The last line is ours (the status, or a progress bar's state): the next write erases it. */
  private statusShown = false;
  /** That line is a stage's progress bar, which shows it alive better than the status would. */
  private barShown = false;

  constructor(
    private readonly out: (text: string) => void,
    private readonly colors: Colors,
    private readonly live: boolean,
  ) {}

  /** Writes `text` where the status line was; it is drawn again at the next tick. */
  write(text: string): void {
    if (this.statusShown) this.out(ERASE_LINE);
    this.statusShown = false;
    this.barShown = false;
    this.out(text);
  }

  /**
   * Shows `text` (one line, no newline, narrower than the terminal) as the last line, in
   * place of the status, until anything else is written: a stage's `\r` progress bar, one
   * state after another on the same line.
   */
  bar(text: string): void {
    this.out(`${ERASE_LINE}${text}`);
    this.statusShown = true;
    this.barShown = true;
  }

  /** A stage runs since `startedAt` (epoch ms); one already running keeps its time. */
  started(stage: string, startedAt = Date.now()): void {
    if (!this.running.has(stage)) this.running.set(stage, startedAt);
    if (!this.live || this.timer) return;
    this.timer = setInterval(() => this.draw(), TICK_MS);
    // The ticker never keeps a finished command alive.
    this.timer.unref();
  }

  /** A stage stopped running; with none left the line is erased. */
  ended(stage: string): void {
    this.running.delete(stage);
    if (this.running.size === 0) this.stop();
  }

  /** Stops redrawing and erases the line. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.statusShown) this.out(ERASE_LINE);
    this.statusShown = false;
    this.barShown = false;
  }

  private draw(): void {
    if (this.barShown) return;
    const now = Date.now();
    const parts = [...this.running].map(
      ([stage, startedAt]) =>
        `${stage} ${formatDuration(Math.max(0, Math.floor((now - startedAt) / 1000)) * 1000)}`,
    );
    this.out(`${ERASE_LINE}${this.colors.dim(`▸ running: ${parts.join(', ')}`)}`);
    this.statusShown = true;
  }
}

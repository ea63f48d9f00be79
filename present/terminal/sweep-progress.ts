import type { Colors } from 'picocolors/types.js';
import type { RunEventBody } from '../../schemas/run-event.js';
import { formatDuration, short } from '../../core/text/format.js';
import { stageDetail, statusBadge } from './progress-printer.js';

/** How often the members' board is redrawn on a terminal. */
const TICK_MS = 1000;

interface MemberState {
  label: string;
  runId: string | null;
  /** Running stages and when each started (epoch ms). */
  running: Map<string, number>;
  finishedStages: number;
  /** How the run ended, once it has. */
  ended: string | null;
}

/**
 * Shows a sweep whose members run at once (DESIGN §9: progress shows each member): a line
 * as each member starts, as each of its stages ends (status, duration, why it ran or where
 * it came from) and its summary as it ends, each tagged with the member (`[2/4 lr=0.01]`).
 * The stages' own output is not interleaved here; `fluksio show RUN --log STAGE` has it.
 * With `live` (a terminal), a board below says what every member is doing now — waiting,
 * the stages running with their elapsed time, or how it ended — redrawn every second and
 * erased before anything else is written, so it never stays in the scrollback.
 */
export class SweepProgress {
  private readonly members: MemberState[];
  private readonly tagWidth: number;
  private readonly stageWidth: number;
  private boardLines = 0;
  private ticker: NodeJS.Timeout | null = null;

  constructor(
    private readonly out: (text: string) => void,
    private readonly colors: Colors,
    /** Each member's params that vary, `lr=0.01`, in grid order. */
    labels: readonly string[],
    stageNames: readonly string[],
    private readonly live = false,
  ) {
    this.members = labels.map((label, index) => ({
      label: `[${index + 1}/${labels.length}${label ? ` ${label}` : ''}]`,
      runId: null,
      running: new Map(),
      finishedStages: 0,
      ended: null,
    }));
    this.tagWidth = Math.max(...this.members.map((member) => member.label.length));
    this.stageWidth = Math.max(...stageNames.map((name) => name.length));
  }

  /** Member `index` was recorded as run `runId` and starts its stages. */
  started(index: number, runId: string): void {
    const member = this.memberAt(index);
    member.runId = runId;
    this.write(`${this.colors.bold('▸')} ${this.tag(member)} run ${runId}\n`);
    this.startTicker();
  }

  /** The engine's events of member `index`, as an EventSink (runner/ports.ts) by its shape. */
  member(index: number): { emit(event: RunEventBody): void; flush(): Promise<void> } {
    const member = this.memberAt(index);
    return {
      emit: (event) => {
        if (event.type === 'stage.started') {
          member.running.set(event.stage, Date.now());
          this.redraw();
        } else if (event.type === 'stage.finished') {
          const { stage } = event;
          member.running.delete(stage.name);
          member.finishedStages += 1;
          const detail = stageDetail(stage);
          this.write(
            `${statusBadge(stage.status, this.colors)} ${this.tag(member)} ${this.colors.bold(stage.name.padEnd(this.stageWidth))}  ${formatDuration(stage.durationMs).padStart(7)}${detail ? `  ${this.colors.dim(detail)}` : ''}\n`,
          );
        }
      },
      flush: async () => {},
    };
  }

  /** Member `index` ended with `status`; `summary` is what to show of it. */
  ended(index: number, status: string, summary: string): void {
    const member = this.memberAt(index);
    member.running.clear();
    member.ended = status;
    this.write(`\n${this.colors.bold(`${this.tag(member)} ${status}`)}\n${summary}`);
  }

  /** Stops redrawing and erases the board. */
  finish(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    this.erase();
  }

  private memberAt(index: number): MemberState {
    const member = this.members[index];
    if (!member) throw new Error(`No sweep member ${index}`);
    return member;
  }

  private tag(member: MemberState): string {
    return this.colors.cyan(member.label.padEnd(this.tagWidth));
  }

  private write(text: string): void {
    this.erase();
    this.out(text);
    this.draw();
  }

  private startTicker(): void {
    if (!this.live || this.ticker) return;
    this.ticker = setInterval(() => this.redraw(), TICK_MS);
    // The ticker never keeps a finished command alive.
    this.ticker.unref();
  }

  private redraw(): void {
    this.erase();
    this.draw();
  }

  private erase(): void {
    // Up to the board's first line, then everything below it.
    if (this.boardLines > 0) this.out(`\u001b[${this.boardLines}F\u001b[J`);
    this.boardLines = 0;
  }

  private draw(): void {
    if (!this.live || !this.ticker) return;
    const now = Date.now();
    const lines = this.members.map((member) => {
      const state =
        member.ended !== null
          ? member.ended
          : member.runId === null
            ? this.colors.dim('waiting')
            : member.running.size > 0
              ? `▸ ${[...member.running].map(([stage, at]) => `${stage} ${formatDuration(Math.floor((now - at) / 1000) * 1000)}`).join(', ')}`
              : this.colors.dim(`${member.finishedStages} stage(s) done`);
      return `  ${this.tag(member)} ${member.runId ? this.colors.dim(short(member.runId, 10)) : ' '.repeat(10)}  ${state}\n`;
    });
    this.out(lines.join(''));
    this.boardLines = lines.length;
  }
}

/** How a member's end reads on its line: its status, painted by how it went. */
export function memberStatus(status: string, colors: Colors): string {
  const paint = status === 'succeeded' ? colors.green : status === 'cancelled' ? colors.yellow : colors.red;
  return paint(status);
}

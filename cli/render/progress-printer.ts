import type { Colors } from 'picocolors/types.js';
import type { RunEventBody } from '../../schemas/run-event.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import type { EventSink } from '../../runner/ports.js';
import { formatDuration, short } from './format.js';

/** How each stage status reads in a terminal. */
export function statusBadge(status: StageRecord['status'], colors: Colors): string {
  switch (status) {
    case 'ran':
      return colors.green('✓ ran');
    case 'cached':
      return colors.cyan('● cached');
    case 'failed':
      return colors.red('✗ failed');
    case 'timed_out':
      return colors.red('⏱ timed out');
    case 'cancelled':
      return colors.yellow('⊘ cancelled');
    case 'skipped':
      return colors.dim('– skipped');
    default:
      return colors.dim(status);
  }
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
 * their name, as it streams.
 */
export class ProgressPrinter implements EventSink {
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
            this.write(`  ${colors.dim(`${event.stage.padEnd(this.width)} │`)} ${line}\n`);
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

/** Sends every event to each sink; flushes them all. */
export function teeSinks(...sinks: EventSink[]): EventSink {
  return {
    emit: (event) => sinks.forEach((sink) => sink.emit(event)),
    flush: async () => {
      await Promise.all(sinks.map((sink) => sink.flush()));
    },
  };
}

import type { Colors } from 'picocolors/types.js';
import type { RunEventBody } from '../schemas/run-event.js';
import type { EventSink } from '../runner/ports.js';
import { formatDuration } from '../core/text/format.js';
import { stageDetail, statusBadge } from '../present/terminal/progress-printer.js';
import { oneLine, type WorkflowLog } from './workflow-log.js';

/**
 * Shows a run in the job log: each stage's output in a `::group::` of its own, fenced so
 * none of it acts as a workflow command, and after the group one line with how the stage
 * ended (ran/cached, duration, why it re-ran or failed). Stages run one at a time in
 * the action, so a group holds exactly one stage's output.
 */
export class StageGroupPrinter implements EventSink {
  private openStage: string | null = null;
  private readonly width: number;

  constructor(
    private readonly log: WorkflowLog,
    private readonly colors: Colors,
    stageNames: readonly string[],
  ) {
    this.width = Math.max(...stageNames.map((name) => name.length));
  }

  emit(event: RunEventBody): void {
    switch (event.type) {
      case 'stage.started':
        this.close();
        this.log.group(event.stage);
        this.openStage = event.stage;
        break;
      case 'stage.log':
        this.log.untrusted(event.lines.map((line) => `${line}\n`).join(''));
        break;
      case 'stage.finished': {
        if (this.openStage === event.stage.name) this.close();
        const stage = event.stage;
        const detail = oneLine(stageDetail(stage));
        this.log.untrusted(
          `${statusBadge(stage.status, this.colors)} ${this.colors.bold(stage.name.padEnd(this.width))}  ${formatDuration(stage.durationMs).padStart(7)}${detail ? `  ${this.colors.dim(detail)}` : ''}\n`,
        );
        break;
      }
      default:
        break;
    }
  }

  async flush(): Promise<void> {
    this.close();
    this.log.closeFence();
  }

  private close(): void {
    if (this.openStage === null) return;
    this.openStage = null;
    this.log.endGroup();
  }
}

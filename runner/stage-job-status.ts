import type { EventSink } from './ports.js';
import type { JobEnd, JobStatus } from './sandbox/job-status-line.js';
import type { Unstartable } from './sandbox/slurm-unstartable.js';

/**
 * What one stage's batch job is doing, from its launch's statuses: the job it follows and
 * what ended it when the batch system did (for the stage's error, JobEnd), and a
 * `stage.pending` event each time why it waits changes, `pending: null` when it stops
 * waiting. A job that never waits reports nothing.
 */
export class StageJobStatus implements JobEnd {
  /** The job the launch last reported following; null before any (or for no job). */
  job: string | null = null;
  endedBy: string | null = null;
  refused: string | null = null;
  unstartable: Unstartable | null = null;
  /** The pending state last reported, as JSON: only a change is reported. */
  private reported = 'null';

  constructor(
    private readonly stage: string,
    private readonly events: EventSink,
  ) {}

  take(status: JobStatus): void {
    this.job = status.job;
    if (status.endedBy !== undefined) this.endedBy = status.endedBy;
    if (status.refused !== undefined) this.refused = status.refused;
    if (status.unstartable !== undefined) this.unstartable = status.unstartable;
    const pending = JSON.stringify(status.pending);
    if (pending === this.reported) return;
    this.reported = pending;
    this.events.emit({ type: 'stage.pending', stage: this.stage, pending: status.pending });
  }
}

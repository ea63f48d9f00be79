import type { Annotation } from '../schemas/annotation.js';
import type { JobPending } from '../schemas/job-pending.js';
import type { MetricPoint } from '../schemas/metric-point.js';
import { groupSeries } from '../schemas/metric-series.js';
import type { RunEvent } from '../schemas/run-event.js';
import { emptyStageRecord, isCacheable, type StageRecord } from '../schemas/stage-record.js';
import type { RunStatus } from '../schemas/statuses.js';
import type { Run } from '../schemas/tables/runs.js';
import { BatchingEventSink } from '../runner/output/batching-event-sink.js';
import type { RunDetail } from '../store/runs/get-run-detail.js';
import type { LocalIndex } from './local-index.js';
import { LiveStageLogs } from './live-stage-logs.js';
import { RunJournal } from './run-journal.js';

/** How a local run ended. */
export interface LocalRunEnd {
  status: RunStatus;
  reason: string | null;
  metrics: Record<string, number>;
  /** What changed in the code while stages ran: the run is dirty whatever its start said. */
  dirtyReasons: string[];
  /** The run it is compared with, fixed now; null for none. */
  baselineRunId: string | null;
}

/**
 * Records one local run without the embedded database: every record goes to the run's
 * journal first (made durable when the run ends), then what later runs look up goes to the store's index — a
 * stage's cache entry once the line holding its finish is on disk, the run as a baseline
 * once it succeeded. It also keeps the run's detail (stages, annotations, series) in
 * memory, which is what the summary is printed from.
 */
export class LocalRunRecorder {
  /** The engine's events, journaled in batches (a stage's log is a blob, not journaled; while it runs, a live file). */
  readonly events: BatchingEventSink;
  readonly runId: string;
  private run: Run;
  private readonly stages = new Map<string, StageRecord>();
  private readonly annotations: Annotation[] = [];
  /** By stage, name and step: a point reported twice keeps its last value, as the database does. */
  private readonly points = new Map<string, MetricPoint>();

  private constructor(
    private readonly journal: RunJournal,
    private readonly index: LocalIndex,
    run: Run,
    private readonly live: LiveStageLogs | null,
    private readonly teamPoints: ((key: string) => Promise<MetricPoint[]>) | null,
  ) {
    this.run = run;
    this.runId = run.id;
    this.events = new BatchingEventSink({ deliver: (events) => this.deliver(events) });
  }

  /** Journals a new run (`run.created` with its whole row) and returns its recorder. */
  static async start(options: {
    journalDir: string;
    /** Where the stages' logs are written while they run (for `fluksio ui`); none when absent. */
    liveDir?: string;
    index: LocalIndex;
    run: Run;
    /** The series of a team's cache entry, for a stage restored from it (`--remote-cache`). */
    teamPoints?: (key: string) => Promise<MetricPoint[]>;
  }): Promise<LocalRunRecorder> {
    const journal = await RunJournal.create(options.journalDir, options.run.id, {
      type: 'run.created',
      run: JSON.parse(JSON.stringify(options.run)) as Record<string, unknown>,
    });
    const live = options.liveDir === undefined ? null : new LiveStageLogs(options.liveDir, options.run.id);
    return new LocalRunRecorder(journal, options.index, options.run, live, options.teamPoints ?? null);
  }

  /** Journals how the run ended and, for a success, records it as a baseline. Closes the journal. */
  async finish(end: LocalRunEnd): Promise<Run> {
    const finishedAt = new Date();
    try {
      await this.journal.append({
        type: 'run.finished',
        status: end.status,
        reason: end.reason,
        metrics: end.metrics,
        dirtyReasons: end.dirtyReasons,
        finishedAt: finishedAt.toISOString(),
        baselineRunId: end.baselineRunId,
      });
      await this.journal.sync();
    } finally {
      await this.journal.close();
      // Every stage's log is a blob now, which the pages read from the same offsets.
      await this.live?.remove().catch(() => {});
    }
    this.run = {
      ...this.run,
      status: end.status,
      statusReason: end.reason,
      metrics: end.metrics,
      ...(end.dirtyReasons.length > 0 ? { dirty: true, dirtyReasons: end.dirtyReasons } : {}),
      finishedAt,
      durationMs: finishedAt.getTime() - (this.run.startedAt ?? this.run.createdAt).getTime(),
      baselineRunId: end.baselineRunId,
      baselineFixed: true,
    };
    if (end.status === 'succeeded') await this.index.recordSucceededRun(this.run);
    return this.run;
  }

  /**
   * The run as `fluksio show` would read it from the database: a cached stage's series are
   * those its cache entry's run streamed, under this run's stage name.
   */
  async detail(): Promise<RunDetail> {
    const stages = [...this.stages.values()];
    const restored: MetricPoint[] = [];
    for (const stage of stages) {
      // A stage restored from the team's cache has its series journaled as its own (deliver).
      if (stage.status !== 'cached' || stage.cacheKey === null || stage.cachedFromTeam) continue;
      const indexed = await this.index.cacheEntry(stage.cacheKey);
      if (indexed?.entry.runId !== stage.cachedFrom) continue;
      for (const point of indexed.points) restored.push({ ...point, stage: stage.name });
    }
    return {
      run: this.run,
      stages,
      annotations: [...this.annotations],
      series: groupSeries(
        stages.map((stage) => stage.name),
        [...this.points.values(), ...restored],
      ),
    };
  }

  private async deliver(batch: RunEvent[]): Promise<void> {
    const events: RunEvent[] = [];
    for (const event of batch) {
      if (event.type === 'stage.log') void this.live?.append(event.stage, event.lines);
      // Why a job waits is live state, shown as it changes and in the log: nothing to journal.
      else if (event.type === 'stage.pending') this.recordPending(event.stage, event.pending);
      else events.push(event);
    }
    if (events.length > 0) await this.journal.append({ type: 'run.events', events });
    for (const event of events) {
      switch (event.type) {
        case 'stage.started':
          if (!this.stages.has(event.stage))
            this.stages.set(event.stage, startedRecord(event.stage, event.at));
          break;
        case 'stage.finished':
          this.stages.set(event.stage.name, event.stage);
          if (isCacheable(event.stage)) await this.recordCacheEntry(event.stage);
          if (event.stage.status === 'cached' && event.stage.cachedFromTeam)
            await this.recordTeamEntry(event.stage);
          if (event.stage.keyInputs !== null) {
            await this.index.recordPreviousStage(this.run.pipelinePath, event.stage.name, {
              runId: this.run.id,
              keyInputs: event.stage.keyInputs,
            });
          }
          break;
        case 'metric.points':
          for (const point of event.points) {
            this.points.set(JSON.stringify([point.stage, point.name, point.step]), point);
          }
          break;
        case 'annotation':
          this.annotations.push(event.annotation);
          break;
      }
    }
  }

  /** Why a running stage's job waits (null: no longer), on its record while it runs. */
  private recordPending(stage: string, pending: JobPending | null): void {
    const record = this.stages.get(stage);
    if (record?.status === 'running') this.stages.set(stage, { ...record, pending });
  }

  /**
   * A stage restored from the team's cache: the series its entry's stage streamed in the
   * team's run are journaled as this stage's (so `show` and the pages have them, though that
   * run is not in this store), and the entry is remembered in the index, so the next run
   * restores it from here, offline too.
   */
  private async recordTeamEntry(stage: StageRecord): Promise<void> {
    if (stage.cacheKey === null || stage.keyInputs === null || stage.cachedFrom === null) return;
    const points = ((await this.teamPoints?.(stage.cacheKey)) ?? []).map((point) => ({
      ...point,
      stage: stage.name,
    }));
    // Journaled and kept by deliver, in the delivery under way (the sink delivers until empty).
    if (points.length > 0) this.events.emit({ type: 'metric.points', points });
    await this.index.recordCacheEntry({
      entry: {
        key: stage.cacheKey,
        stage: stage.name,
        runId: stage.cachedFrom,
        outs: stage.outs,
        metrics: stage.metrics,
        keyInputs: stage.keyInputs,
        createdAt: new Date().toISOString(),
      },
      points,
    });
  }

  private async recordCacheEntry(stage: StageRecord): Promise<void> {
    // isCacheable has checked these; it is not a type guard.
    if (stage.cacheKey === null || stage.keyInputs === null) return;
    await this.index.recordCacheEntry({
      entry: {
        key: stage.cacheKey,
        stage: stage.name,
        runId: this.run.id,
        outs: stage.outs,
        metrics: stage.metrics,
        keyInputs: stage.keyInputs,
        createdAt: new Date().toISOString(),
      },
      points: [...this.points.values()].filter((point) => point.stage === stage.name),
    });
  }
}

/** A stage that started and has not finished, as the database records it meanwhile. */
function startedRecord(name: string, at: string): StageRecord {
  return { ...emptyStageRecord(name, 'running'), startedAt: at };
}

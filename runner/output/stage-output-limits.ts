/** A stage's metrics unless StageOutputOptions.maxMetrics says otherwise. */
export const MAX_STAGE_METRICS = 1000;
/** A stage's metric points unless StageOutputOptions.maxMetricPoints says otherwise. */
export const MAX_STAGE_METRIC_POINTS = 1_000_000;
/** A stage's annotations unless StageOutputOptions.maxAnnotations says otherwise. */
export const MAX_STAGE_ANNOTATIONS = 1000;

/** Whether one more thing a stage reports is kept, and the sentence saying, once, that a limit was reached. */
export interface Admission {
  kept: boolean;
  /** Set the first time a limit refuses something: said in the log and as a warning. */
  notice: string | null;
}

/**
 * What one stage may report of metrics, metric points and annotations (StageOutput's
 * `maxMetrics`, `maxMetricPoints`, `maxAnnotations`), counted as it reports them, and the
 * lines that end its log saying what was left out. Its own bookkeeping is bounded too: a
 * loop printing a new metric name per turn past the limit is counted, not remembered.
 */
export class StageOutputLimits {
  private readonly limits: { metrics: number; points: number; annotations: number };
  private readonly kept = { points: 0, annotations: 0 };
  /** The names ignored past the metrics limit, as many as the limit at most, and whether more were. */
  private readonly ignoredNames = new Set<string>();
  private moreIgnoredNames = false;
  private readonly ignored = { metricPoints: 0, points: 0, annotations: 0 };

  constructor(limits: { metrics?: number; points?: number; annotations?: number }) {
    this.limits = {
      metrics: limits.metrics ?? MAX_STAGE_METRICS,
      points: limits.points ?? MAX_STAGE_METRIC_POINTS,
      annotations: limits.annotations ?? MAX_STAGE_ANNOTATIONS,
    };
    for (const [kind, limit] of Object.entries(this.limits)) {
      if (!Number.isSafeInteger(limit) || limit < 1) {
        throw new Error(`the ${kind} limit must be a positive integer, got ${limit}`);
      }
    }
  }

  /** A point of the metric `name`, which is new (never kept before) when `metrics` already counts the metrics kept. */
  metric(name: string, metrics: number, isNew: boolean): Admission {
    if (!isNew || metrics < this.limits.metrics) return { kept: true, notice: null };
    const first = this.ignored.metricPoints === 0;
    this.ignored.metricPoints += 1;
    if (this.ignoredNames.size < this.limits.metrics) this.ignoredNames.add(name);
    else if (!this.ignoredNames.has(name)) this.moreIgnoredNames = true;
    return {
      kept: false,
      notice: first
        ? `this stage reported ${this.limits.metrics} metrics, the most one stage keeps: points of other metrics are ignored, from "${name}" on`
        : null,
    };
  }

  /** A point of a metric kept: whether its series takes it. */
  point(): Admission {
    if (this.kept.points < this.limits.points) {
      this.kept.points += 1;
      return { kept: true, notice: null };
    }
    this.ignored.points += 1;
    return {
      kept: false,
      notice:
        this.ignored.points === 1
          ? `this stage reported ${this.limits.points} metric points, the most one stage keeps: its series stop here, its metrics' final values still follow what it prints`
          : null,
    };
  }

  /** An `::error`, `::warning` or `::notice` annotation of `level`. */
  annotation(level: string): Admission {
    if (this.kept.annotations < this.limits.annotations) {
      this.kept.annotations += 1;
      return { kept: true, notice: null };
    }
    this.ignored.annotations += 1;
    return {
      kept: false,
      notice:
        this.ignored.annotations === 1
          ? `this stage reported ${this.limits.annotations} annotations, the most one stage keeps: later ::${level} lines stay in the log only`
          : null,
    };
  }

  /** The lines that end the log, saying how much each limit left out. */
  endLines(): string[] {
    const { metricPoints, points, annotations } = this.ignored;
    const names = `${this.ignoredNames.size}${this.moreIgnoredNames ? '+' : ''}`;
    return [
      ...(metricPoints > 0
        ? [
            `fluksio: ignored ${metricPoints} points of ${names} metrics past the limit of ${this.limits.metrics} metrics per stage`,
          ]
        : []),
      ...(points > 0
        ? [
            `fluksio: left ${points} metric points out of the series past the limit of ${this.limits.points} points per stage (final values count them)`,
          ]
        : []),
      ...(annotations > 0
        ? [
            `fluksio: left ${annotations} annotations out past the limit of ${this.limits.annotations} per stage (they are in the log)`,
          ]
        : []),
    ];
  }
}

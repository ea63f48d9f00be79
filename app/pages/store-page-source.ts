import { eq, inArray } from 'drizzle-orm';
import type { MetricGoals } from '../../schemas/metric-diff.js';
import type { PageRunSummary, PageSeries, RunsPageData } from '../../schemas/page-data.js';
import { isFinalRunStatus } from '../../schemas/statuses.js';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import type { BlobDigest } from '../../schemas/blob-digest.js';
import type { Readable } from 'node:stream';
import type { Database } from '../../store/db/database.js';
import { getRunDetail } from '../../store/runs/get-run-detail.js';
import { groupRepositories } from '../../store/runs/group-repositories.js';
import { listGroupRuns } from '../../store/runs/list-group-runs.js';
import { listRepositoryRuns } from '../../store/runs/list-repository-runs.js';
import { groupSeries } from '../../schemas/metric-series.js';
import { getSeriesOverview } from '../../store/runs/get-series-overview.js';
import { readPointsAfter } from '../../store/runs/read-points-after.js';
import { buildRunPageData } from './build-run-page-data.js';
import type { PageSource } from './page-source.js';

/**
 * Lines a log read aims at: a page shows the first piece of a 100,000-line log at once,
 * and the live stream sends what is new in one event.
 */
const LOG_CHUNK_LINES = 5_000;

/** How a store-backed source finds what a control plane and a project store keep apart. */
export interface StorePageSourceOptions {
  db: Database;
  /**
   * A stage's log lines from `position` (the source's own unit: an event seq, a byte
   * offset), about `maxLines` of them or fewer, with the position after them; null when
   * the run has no such stage.
   */
  readStageLog(
    run: Run,
    stage: string,
    position: number,
    maxLines: number,
  ): Promise<{ lines: string[]; next: number; atEnd: boolean } | null>;
  /** The run a run's metrics are compared against, or null. */
  baselineOf(run: Run): Promise<Run | null>;
  /** The metric goals a run is judged by (a project's pipeline locally, the run's own on a server). */
  goalsOf(run: Run): MetricGoals;
  /**
   * The bytes of a blob a run's output names, unverified, or null when it is not stored
   * (or not readable by the run's repository).
   */
  openBlob(run: Run, digest: BlobDigest): Promise<(() => Promise<Readable>) | null>;
  /** The repository a list shows when none is named (`local` for a project's store). @defaultValue null */
  defaultRepository?: string | null;
}

/**
 * The pages' reads over a fluksio database: the same queries `fluksio show` uses, with
 * the log and the baseline supplied by the caller (log_lines rows on a control plane,
 * blobs in a project's store).
 */
export function storePageSource(options: StorePageSourceOptions): PageSource {
  const { db } = options;
  const findRun = async (runId: string): Promise<Run | null> =>
    (await db.select().from(runs).where(eq(runs.id, runId)))[0] ?? null;

  async function summaries(found: Run[]): Promise<PageRunSummary[]> {
    return Promise.all(
      found.map(async (run) => {
        const detail = await getRunDetail({ db, runId: run.id });
        return {
          id: run.id,
          status: run.status,
          params: run.params,
          metrics: run.metrics,
          series: detail?.series ?? {},
          groupIndex: run.groupIndex,
        };
      }),
    );
  }

  function runsPage(found: Run[], groupId: string | null): Promise<RunsPageData> {
    const goals = Object.assign({}, ...found.map((run) => options.goalsOf(run))) as MetricGoals;
    return summaries(found).then((summarised) => ({
      repository: found[0]?.repository ?? '',
      groupId,
      goals,
      runs: summarised,
    }));
  }

  const source: PageSource = {
    defaultRepository: options.defaultRepository ?? null,
    async runList(filter, before, limit) {
      const page = await listRepositoryRuns({ db, filter, before, limit });
      return {
        repository: filter.repository,
        prNumber: filter.prNumber ?? null,
        next: page.next,
        runs: page.runs.map((run) => ({
          id: run.id,
          status: run.status,
          params: run.params,
          metrics: run.metrics,
          branch: run.branch,
          commit: run.commit,
          prNumber: run.prNumber,
          trigger: run.trigger,
          groupId: run.groupId,
          createdAt: run.createdAt.toISOString(),
          durationMs: run.durationMs,
        })),
      };
    },
    async repositoryOfRun(runId) {
      return (await findRun(runId))?.repository ?? null;
    },
    async repositoryOfGroup(groupId) {
      // A group whose runs span repositories (the submit route refuses to make one) is nobody's.
      const repositories = await groupRepositories({ db, groupId });
      return repositories.length === 1 ? (repositories[0] ?? null) : null;
    },
    async runPage(runId, buckets) {
      if (buckets === undefined) {
        const detail = await getRunDetail({ db, runId });
        if (!detail) return null;
        const baselineRun = await options.baselineOf(detail.run);
        const baselineDetail = baselineRun ? await getRunDetail({ db, runId: baselineRun.id }) : null;
        return buildRunPageData({
          detail,
          baseline: baselineDetail ? { run: baselineDetail.run, series: baselineDetail.series } : null,
          goals: options.goalsOf(detail.run),
        });
      }
      // Cut down where the points are: a page gets two thousand of a run's hundred thousand.
      const detail = await getRunDetail({ db, runId, series: false });
      if (!detail) return null;
      const baselineRun = await options.baselineOf(detail.run);
      const baselineDetail = baselineRun
        ? await getRunDetail({ db, runId: baselineRun.id, series: false })
        : null;
      const [series, baselineSeries] = await Promise.all([
        getSeriesOverview({ db, runId, stages: detail.stages, buckets }),
        baselineDetail
          ? getSeriesOverview({ db, runId: baselineDetail.run.id, stages: baselineDetail.stages, buckets })
          : {},
      ]);
      return buildRunPageData({
        detail: { ...detail, series },
        baseline: baselineDetail ? { run: baselineDetail.run, series: baselineSeries } : null,
        goals: options.goalsOf(detail.run),
      });
    },
    async runUpdate(runId, held, buckets) {
      // The run's state without its points, and only the points past those held.
      const detail = await getRunDetail({ db, runId, series: false });
      if (!detail) return null;
      const points = await readPointsAfter({ db, runId, held, perSeries: 2 * buckets + 1 });
      if (points === null) return source.runPage(runId, buckets);
      const baseline = await options.baselineOf(detail.run);
      const data = buildRunPageData({
        detail: {
          ...detail,
          series: groupSeries(
            detail.stages.map((stage) => stage.name),
            points,
          ),
        },
        baseline: baseline ? { run: baseline, series: {} } : null,
        goals: options.goalsOf(detail.run),
      });
      return { ...data, partial: true };
    },
    async seriesRange(runId, name, range, buckets) {
      const detail = await getRunDetail({ db, runId, series: false });
      if (!detail) return null;
      const baselineRun = await options.baselineOf(detail.run);
      const baselineDetail = baselineRun
        ? await getRunDetail({ db, runId: baselineRun.id, series: false })
        : null;
      const wanted = { buckets, name, range };
      const [own, base]: [Record<string, PageSeries>, Record<string, PageSeries>] = await Promise.all([
        getSeriesOverview({ db, runId, stages: detail.stages, ...wanted }),
        baselineDetail
          ? getSeriesOverview({ db, runId: baselineDetail.run.id, stages: baselineDetail.stages, ...wanted })
          : {},
      ]);
      return {
        name,
        ...range,
        series: Object.hasOwn(own, name) ? own[name]! : null,
        baseline: Object.hasOwn(base, name) ? base[name]! : null,
      };
    },
    async outBlob(runId, digest) {
      const run = await findRun(runId);
      if (!run) return null;
      const recorded = await db.select({ outs: stages.outs }).from(stages).where(eq(stages.runId, runId));
      const out = recorded
        .flatMap((stage) => stage.outs)
        .find((candidate) => candidate.kind === 'file' && candidate.digest === digest);
      if (!out) return null;
      const open = await options.openBlob(run, digest);
      return open && { path: out.path, size: out.size, open };
    },
    async stageLog(runId, stage, cursor) {
      const run = await findRun(runId);
      if (!run) return null;
      // Read the status before the lines: a run final at that moment has all its lines stored.
      const final = isFinalRunStatus(run.status);
      const read = await options.readStageLog(run, stage, cursor.position, LOG_CHUNK_LINES);
      if (read === null) return null;
      return {
        from: cursor.line,
        lines: read.lines,
        next: { line: cursor.line + read.lines.length, position: read.next },
        final: final && read.atEnd,
      };
    },
    async groupPage(groupId) {
      const [repository, ...others] = await groupRepositories({ db, groupId });
      if (repository === undefined || others.length > 0) return null;
      const found = await listGroupRuns({ db, groupId, repository });
      return found.length === 0 ? null : runsPage(found, groupId);
    },
    async comparePage(runIds) {
      const found = await db
        .select()
        .from(runs)
        .where(inArray(runs.id, [...runIds]));
      if (found.length !== new Set(runIds).size) return null;
      const byId = new Map(found.map((run) => [run.id, run]));
      return runsPage(
        runIds.map((id) => byId.get(id)!),
        null,
      );
    },
  };
  return source;
}

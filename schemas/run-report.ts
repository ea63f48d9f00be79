import { z } from 'zod';
import { Annotation } from './annotation.js';
import { JobPending } from './job-pending.js';
import { ParamValue } from './key-inputs.js';
import { OutRecord } from './out-record.js';
import { diffMetrics, type MetricGoals } from './metric-diff.js';
import type { StageRecord } from './stage-record.js';
import { RunStatus, StageStatus } from './statuses.js';
import { StageSelection } from './stage-selection.js';
import { StageUsage } from './stage-usage.js';
import type { Run } from './tables/runs.js';

/**
 * What `fluksio run --json` prints for a run, and what `GET /api/v1/runs/:id` answers
 * (DESIGN §6): the stamp, each stage with why it ran or where it was cached from, the
 * metrics and their diff against the baseline, and the annotations.
 */
export const RunReport = z.object({
  run: z.object({
    id: z.string(),
    pipelinePath: z.string(),
    commit: z.string().nullable(),
    dirty: z.boolean(),
    /** What changed in the code while the run's stages ran, making it dirty (issue 8, defect 1). */
    dirtyReasons: z.array(z.string()),
    codeDigest: z.string().nullable(),
    paramsDigest: z.string(),
    envDigest: z.string().nullable(),
    params: z.record(z.string(), ParamValue),
    status: RunStatus,
    reason: z.string().nullable(),
    groupId: z.string().nullable(),
    /** The stages asked for, when the run ran fewer than all (absent from older servers' reports). */
    selection: StageSelection.nullable().default(null),
    createdAt: z.string(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    durationMs: z.number().nullable(),
    /**
     * CPU- and GPU-seconds its Slurm jobs used, every attempt's (stage-usage.ts); null when
     * no stage ran as a job. Absent from older reports.
     */
    cpuSeconds: z.number().nullable().default(null),
    gpuSeconds: z.number().nullable().default(null),
  }),
  stages: z.array(
    z.object({
      name: z.string(),
      status: StageStatus,
      cacheKey: z.string().nullable(),
      cachedFrom: z.string().nullable(),
      /** The entry came from the team's cache on the control plane (`--remote-cache`); absent from older reports. */
      cachedFromTeam: z.boolean().default(false),
      reasons: z.array(z.string()),
      /** How the stage is keyed, when the summary must say so (see StageRecord); absent from older servers' reports. */
      notes: z.array(z.string()).default([]),
      durationMs: z.number(),
      exitCode: z.number().nullable(),
      error: z.string().nullable(),
      /** What the stage produced, as blobs (`fluksio pull` downloads them). */
      outs: z.array(OutRecord),
      /** Key inputs that changed while it ran: why its result was not cached. */
      dirtyReasons: z.array(z.string()),
      /** What the user should fix, such as files it wrote that are neither outs nor ignored. */
      warnings: z.array(z.string()),
      /** The Slurm job it ran as and what that used; null for none. Absent from older reports. */
      usage: StageUsage.nullable().default(null),
      /** Why its Slurm job waits in the queue, while it does; null otherwise. Absent from older reports. */
      pending: JobPending.nullable().default(null),
    }),
  ),
  metrics: z.record(z.string(), z.number()),
  baseline: z.object({ id: z.string(), commit: z.string().nullable() }).nullable(),
  diff: z.array(
    z.object({
      name: z.string(),
      baseline: z.number().nullable(),
      value: z.number().nullable(),
      delta: z.number().nullable(),
      deltaPct: z.number().nullable(),
      better: z.boolean().nullable(),
    }),
  ),
  annotations: z.array(Annotation),
});
export type RunReport = z.infer<typeof RunReport>;

/** Builds the report of a run from its rows, its baseline run (or null) and the metric goals. */
export function buildRunReport(
  detail: { run: Run; stages: StageRecord[]; annotations: Annotation[] },
  baseline: Run | null,
  goals: MetricGoals,
): RunReport {
  const { run } = detail;
  return {
    run: {
      id: run.id,
      pipelinePath: run.pipelinePath,
      commit: run.commit,
      dirty: run.dirty,
      dirtyReasons: run.dirtyReasons,
      codeDigest: run.codeDigest,
      paramsDigest: run.paramsDigest,
      envDigest: run.envDigest,
      params: run.params,
      status: run.status,
      reason: run.statusReason,
      groupId: run.groupId,
      // Rows journaled before the column existed lack it.
      selection: run.selection ?? null,
      createdAt: run.createdAt.toISOString(),
      startedAt: run.startedAt?.toISOString() ?? null,
      finishedAt: run.finishedAt?.toISOString() ?? null,
      durationMs: run.durationMs,
      cpuSeconds: run.cpuSeconds,
      gpuSeconds: run.gpuSeconds,
    },
    stages: detail.stages.map((stage) => ({
      name: stage.name,
      status: stage.status,
      cacheKey: stage.cacheKey,
      cachedFrom: stage.cachedFrom,
      cachedFromTeam: stage.cachedFromTeam,
      reasons: stage.reasons,
      notes: stage.notes,
      durationMs: stage.durationMs,
      exitCode: stage.exitCode,
      error: stage.error,
      outs: stage.outs,
      dirtyReasons: stage.dirtyReasons,
      warnings: stage.warnings,
      usage: stage.usage,
      pending: stage.pending,
    })),
    metrics: run.metrics,
    baseline: baseline ? { id: baseline.id, commit: baseline.commit } : null,
    diff: diffMetrics(run.metrics, baseline?.metrics ?? null, goals),
    annotations: detail.annotations,
  };
}

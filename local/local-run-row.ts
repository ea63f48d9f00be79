import type { Stamp } from '../schemas/stamp.js';
import type { StageSelection } from '../schemas/stage-selection.js';
import type { Run } from '../schemas/tables/runs.js';

/** What a local run is when it starts. */
export interface LocalRunStart {
  id: string;
  repository: string;
  pipelinePath: string;
  groupId: string | null;
  groupIndex: number | null;
  stamp: Stamp;
  noCache: boolean;
  /** The stages asked for, when fewer than all (`fluksio run train`); null for all. */
  selection: StageSelection | null;
  startedAt: Date;
  /** The branch checked out (the run lists filter by it); null when HEAD is detached. */
  branch: string | null;
}

/**
 * The row of a local run as the runs table would hold it once created, every column set:
 * a local run is journaled (and applied to the database later) as this whole row, so the
 * database's defaults must not decide it. The server-only columns keep their defaults.
 */
export function localRunRow(start: LocalRunStart): Run {
  const { stamp } = start;
  return {
    id: start.id,
    repository: start.repository,
    pipelinePath: start.pipelinePath,
    trustDomain: 'trusted',
    groupId: start.groupId,
    groupIndex: start.groupIndex,
    commit: stamp.commit,
    dirty: stamp.dirty,
    dirtyReasons: [],
    codeDigest: stamp.codeDigest,
    params: stamp.params,
    paramsDigest: stamp.paramsDigest,
    envDigest: stamp.envDigest,
    sandbox: null,
    noCache: start.noCache,
    selection: start.selection,
    status: 'running',
    statusReason: null,
    labels: [],
    triggerKey: null,
    attempt: 1,
    metrics: {},
    createdAt: start.startedAt,
    startedAt: start.startedAt,
    finishedAt: null,
    durationMs: null,
    cloneUrl: null,
    fetchRef: null,
    fork: false,
    retries: 0,
    leaseExpirations: 0,
    releases: 0,
    timeoutMs: 86_400_000,
    queuedAt: start.startedAt,
    leaseId: null,
    leaseEpoch: 0,
    leaseExpiresAt: null,
    claimedAt: null,
    runnerName: null,
    cancelRequested: false,
    cancelReason: null,
    cancelAs: null,
    submittedBy: null,
    installationId: null,
    prNumber: null,
    trigger: null,
    automatic: false,
    metricGoals: {},
    checkName: null,
    baseRef: null,
    branch: start.branch,
    baselineCommits: null,
    baselineMergeBase: null,
    baselineLookupFailures: 0,
    baselineRunId: null,
    baselineFixed: false,
    cpuSeconds: null,
    gpuSeconds: null,
  };
}

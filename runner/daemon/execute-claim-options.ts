import type { Logger } from 'pino';
import type { Claim } from '../../schemas/protocol/claim.js';
import type { StageRecord } from '../../schemas/stage-record.js';
import type { ControlPlaneClient } from '../../client/control-plane-client.js';
import type { GitWorkspace } from './git-workspace.js';
import type { InterpreterDigests } from '../keys/interpreter-digests.js';
import type { LocalBlobCache } from './local-blob-cache.js';
import type { SandboxPolicy } from './run-sandbox.js';
import type { StageGroups } from '../sandbox/stage-groups.js';

/** Everything one execution of a claimed run needs (execute-claim.ts). */
export interface ExecuteClaimOptions {
  claim: Claim;
  /** The concurrency slot the run executes in (its checkouts are the slot's own). */
  slot: number;
  client: ControlPlaneClient;
  git: GitWorkspace;
  blobCache: LocalBlobCache;
  /** Digests of the programs stages start, shared by the runner's runs. */
  interpreterDigests: InterpreterDigests;
  /** Run fork pull requests' code (`--accept-forks`); otherwise such runs are released. */
  acceptForks: boolean;
  /** Which runs' stages are sandboxed, and whether a sandbox works here. */
  sandbox: SandboxPolicy;
  /** The runner's environment: a trusted run's pipeline `env` values come from it. */
  runnerEnvironment: Readonly<Record<string, string | undefined>>;
  /** The runner's secrets (`--env-file`): for trusted runs only, masked everywhere. */
  secrets: Readonly<Record<string, string>>;
  /** Stages of the run executing at once. */
  jobs: number;
  /** Grace between SIGINT, SIGTERM and SIGKILL for a stopped stage. */
  killGraceMs: number;
  /** Aborted when the runner stops (SIGTERM): the stage is cancelled and the run released. */
  stopSignal: AbortSignal;
  /** Once stopping, how long the run's last events may take to upload before the release. */
  releaseGraceMs: number;
  /**
   * Where a run's events wait on disk while the control plane does not take them, past
   * `eventMemoryBytes` of them in memory (spooled-event-queue.ts).
   */
  eventSpool: {
    dir: string;
    maxMemoryBytes: number;
    /**
     * Where each attempt's events are journaled until acknowledged (event-journal-dir.ts),
     * for a resume to send what a runner killed hard had not: a runner that resumes its
     * runs gives one. @defaultValue none
     */
    journalDir?: string;
  };
  /**
   * Records the process groups of the stages started on this machine, for the next start
   * to end what a kill -9 left running. @defaultValue none
   */
  stageGroups?: StageGroups;
  /** Logs with the run id bound. */
  logger: Logger;
  /**
   * The run is one this runner held before it was restarted, resumed in the same attempt
   * (resume-held-runs.ts): a started run's checkout is taken as it was left, since its
   * Slurm jobs may still run there, and it is not started again; its events continue
   * from `nextSeq`; the stages `finished` in the attempt are kept as recorded, not run
   * again; its writes carry the lease's `epoch` from the resume, those of the process that
   * died an older one, refused. @defaultValue a fresh claim
   */
  resumed?: { started: boolean; nextSeq: number; epoch: number; finished?: readonly StageRecord[] };
}

import type { Logger } from 'pino';

/** How the runner daemon runs (startRunnerDaemon). */
export interface RunnerDaemonOptions {
  /** The control plane's base URL. */
  url: string;
  /** The runner token (from FLUKSIO_RUNNER_TOKEN or --token-file, never a flag). */
  token: string;
  /** Mirrors, checkouts and the blob cache live here; one runner per directory. */
  workDir: string;
  /** Runs executed at once, each in its own slot. @defaultValue 1 */
  concurrency?: number;
  /**
   * Execute fork pull requests' runs: always sandboxed, never with the secrets; refused
   * with the reason when no sandbox works here. @defaultValue false
   */
  acceptForks?: boolean;
  /**
   * `--sandbox`: every run's stages in bubblewrap (run-sandbox.ts); the runner does not
   * start when bubblewrap cannot run here. @defaultValue false
   */
  sandbox?: boolean;
  /**
   * `--stage-user`: the name of a dedicated, unprivileged user every stage runs as, with
   * the work directory closed to it (close-work-dir.ts); needs a root runner, one slot and
   * one job. Combines with `sandbox`. @defaultValue none
   */
  stageUser?: string;
  /**
   * Files and directories no sandboxed stage may see, besides the work directory (and,
   * for fork runs, the home directory): the token file, the `--env-file`. @defaultValue []
   */
  hiddenPaths?: readonly string[];
  /** The runner's secrets (`--env-file`): given to trusted runs' stages, masked in every log. @defaultValue {} */
  secrets?: Readonly<Record<string, string>>;
  /**
   * The runner's environment: trusted runs' pipeline `env` values and every stage's
   * basics come from it, git its PATH and proxies. `FLUKSIO_*` never reaches a stage.
   */
  environment: Readonly<Record<string, string | undefined>>;
  /** Structured log; each run's lines carry its id. */
  logger: Logger;
  /** Stages of one run executing at once. @defaultValue 1 */
  jobs?: number;
  /**
   * Where stages execute: on this machine (`plain`), or each as a Slurm job submitted
   * from it (`slurm`: a login node, the work directory on the cluster's shared file
   * system). @defaultValue 'plain'
   */
  backend?: 'plain' | 'slurm';
  /**
   * With the slurm backend: how long a job may pend for a reason that never clears before
   * it is cancelled and its stage fails (SlurmLauncherOptions.unstartableGraceMs).
   * @defaultValue 120000
   */
  slurmUnstartableGraceMs?: number;
  /** How long one claim request waits for a run (long poll). @defaultValue 30 */
  claimWaitSeconds?: number;
  /** The local blob cache's size cap, in bytes. @defaultValue 10 GiB */
  blobCacheBytes?: number;
  /** The git mirrors' size cap, in bytes: past it the least recently used go. @defaultValue 20 GiB */
  mirrorCacheBytes?: number;
  /**
   * Bytes of one run's unsent events held in memory while the control plane does not take
   * them; the rest wait on disk under `<workDir>/event-spool/`, in order. @defaultValue 16 MiB
   */
  eventMemoryBytes?: number;
  /** Grace between SIGINT, SIGTERM and SIGKILL for a stopped stage. @defaultValue 5000 */
  killGraceMs?: number;
  /** Once stopping, how long a run's last events may take to upload before it is released. @defaultValue 10000 */
  releaseGraceMs?: number;
  /** The longest wait between claims while the control plane is unreachable. @defaultValue 30000 */
  maxBackoffMs?: number;
  /** Retries of one request that failed transiently. @defaultValue 5 */
  requestRetries?: number;
  /** Delay before a request's first retry, doubling after. @defaultValue 500 */
  retryDelayMs?: number;
}

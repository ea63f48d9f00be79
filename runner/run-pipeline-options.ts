import type { CacheEntry } from '../schemas/cache-entry.js';
import type { Pipeline } from '../schemas/pipeline.js';
import type { StageRecord } from '../schemas/stage-record.js';
import type { Params } from '../core/params/resolve-params.js';
import type { CodeIndex } from './keys/code-index.js';
import type { InterpreterDigests } from './keys/interpreter-digests.js';
import type { StageLauncher } from './sandbox/stage-launcher.js';
import type { LauncherProbe } from './keys/launched-python.js';
import type { BlobStore, EventSink, StageCache, StageGate } from './ports.js';
import type { Workspace } from './workspace/workspace.js';

/** Everything one execution of a pipeline needs; the engine reads nothing else. */
export interface RunPipelineOptions {
  runId: string;
  workspace: Workspace;
  /** The validated pipeline. */
  pipeline: Pipeline;
  /** One complete, typed parameter set. */
  params: Params;
  /**
   * The working tree's code index, read when the run started — after the store's lock was
   * taken, so that no other run's stages change the tree after it was read. Stages read it
   * again when a stage process may have changed the tree since (see CodeView).
   */
  codeIndex: CodeIndex;
  /**
   * Digests of the programs stages start, remembered between runs.
   * @defaultValue remembered in memory, for this run only
   */
  interpreterDigests?: InterpreterDigests;
  /**
   * Asks Python launchers which interpreter they start, already asking those of this
   * run's stages (warmLauncherProbe): a caller starts it before reading the tree, so that
   * a slow shim's answer comes while the run is set up. @defaultValue one made, and
   * started, when the run starts
   */
  probeLauncher?: LauncherProbe;
  /**
   * The environment stages' inherited variables (`PATH`) and the pipeline's `env` values
   * are taken from (the CLI passes process.env; nothing else of it reaches a stage).
   */
  environment: Readonly<Record<string, string | undefined>>;
  /** Secrets given to every stage as variables and masked in every log. */
  secrets?: Readonly<Record<string, string>>;
  /** How many stages may execute at once. @defaultValue 1 */
  jobs: number;
  /**
   * Where the pipeline's `fingerprint` command runs: it describes this machine's tools and
   * may read ignored files (a toolchain file) that a scratch checkout lacks.
   * @defaultValue the pipeline's directory in `workspace`
   */
  fingerprintDir?: string;
  /**
   * Stages that finished earlier in this attempt, before the runner was restarted
   * (resume-run.ts): kept as recorded, neither executed nor reported again
   * (reuse-finished-stage.ts). @defaultValue none
   */
  finished?: readonly StageRecord[];
  /**
   * The attempt was begun by a runner process that died, and is resumed here: a stage
   * executed now may have started, and printed, before the restart. Its start is tagged
   * `reattached`, so what it reported earlier in the attempt is replaced, not shown twice.
   * @defaultValue false
   */
  resumedAttempt?: boolean;
  /** Skip cache lookups (entries are still written). */
  noCache: boolean;
  /**
   * The stages to execute or restore, closed under "needs" (core/pipeline/select-stages.ts);
   * the others are not part of the run. @defaultValue every stage
   */
  stages?: readonly string[];
  /** Stages whose cache lookup is skipped (`--force`); the others still hit. @defaultValue none */
  force?: ReadonlySet<string>;
  cache: StageCache;
  /**
   * Shared with the other runs this process executes at once: a stage they all compute
   * alike executes once (see StageGate). @defaultValue none
   */
  gate?: StageGate;
  blobs: BlobStore;
  /**
   * A second stage cache, read-only, asked only when `cache` misses: the team's cache on
   * the control plane (`fluksio run --remote-cache`, issue 13). It is looked up by the same
   * keys, a hit's outs come from `blobsOf(entry)` (the blobs of the run that made it, each
   * verified by digest: a blob missing or corrupt is a miss) and it is recorded
   * `cachedFromTeam`; nothing is ever written to it. @defaultValue none
   */
  teamCache?: { cache: StageCache; blobsOf(entry: CacheEntry): BlobStore };
  events: EventSink;
  /** Cancels the run: running stages get SIGINT, SIGTERM, then SIGKILL. */
  signal?: AbortSignal;
  /** Grace between those signals. @defaultValue 5000 */
  killGraceMs?: number;
  /**
   * Starts stages' commands and the `fingerprint` command: directly, or in a sandbox.
   * @defaultValue directLauncher
   */
  launcher?: StageLauncher;
}

import type { Annotation } from '../schemas/annotation.js';
import type { OutRecord } from '../schemas/out-record.js';
import type { StageRecord } from '../schemas/stage-record.js';
import type { ParsedTraceback } from '../core/traceback.js';
import type { CodeView } from './keys/code-view.js';
import type { InterpreterDigests } from './keys/interpreter-digests.js';
import type { LauncherProbe } from './keys/launched-python.js';
import type { Masker } from './output/masker.js';
import type { RunPipelineOptions } from './run-pipeline-options.js';

/** What one run shares with each of its stages. */
export interface StageRunContext {
  options: RunPipelineOptions;
  fingerprint: string | null;
  /** The keyed variables of every stage's environment (`keyedEnvironment`). */
  keyedEnv: Readonly<Record<string, string | null>>;
  /** A stage's whole environment, given its private directory and its own variables. */
  environmentFor(privateDir: string, extra: Record<string, string>): Record<string, string>;
  /** Where each stage's private directory is made. */
  privateRoot: string;
  /** The code as stages see it (read again after stage processes ran). */
  codeView: CodeView;
  interpreterDigests: InterpreterDigests;
  /** Asks a Python launcher (pyenv's shim) which interpreter it starts, once per run. */
  probeLauncher: LauncherProbe;
  masker: Masker;
  /** Aborted with reason 'cancelled', 'timed_out' or 'given_back' for the whole run. */
  signal: AbortSignal;
  /**
   * Stops the run to give it back for another attempt: a stage was ended by no fault of
   * the run (its Slurm job requeued or preempted), `reason` says which.
   */
  giveBack(reason: string): void;
  /** Outs produced or restored so far in this run, by normalized pipeline path. */
  produced: Map<string, OutRecord>;
  /** Stages of this run that executed rather than restored. */
  ranUpstream: Set<string>;
  /** When the run started, just after its code index was read (epoch ms). */
  runStartedAt: number;
  /** Stages take a translated dvc.yaml's params files in turn (overlayDvcParamsFiles). */
  dvcParamsLock: { tail: Promise<void> };
}

export interface StageResult {
  record: StageRecord;
  annotations: Annotation[];
  tracebacks: ParsedTraceback[];
  /** Code that changed while the stage ran (see StageRecheck.runDirty). */
  runDirty: string[];
}

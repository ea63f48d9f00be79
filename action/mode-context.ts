import type { Colors } from 'picocolors/types.js';
import type { WorkflowLog } from './workflow-log.js';

/** What main hands each mode besides the inputs. */
export interface ModeContext {
  log: WorkflowLog;
  colors: Colors;
  /** Aborted when the workflow is cancelled: the runner signals the step (SIGINT, then SIGTERM). */
  signal: AbortSignal;
  /** The job's environment (process.env at the edge). */
  env: Readonly<Record<string, string | undefined>>;
}

import type { ParamValue } from '../../schemas/key-inputs.js';

/** What `fluksio runs` tabulates of a run, local or on the control plane. */
export interface ExperimentRun {
  id: string;
  status: string;
  commit: string | null;
  /** Made on uncommitted changes (local runs only). */
  dirty: boolean;
  params: Readonly<Record<string, ParamValue>>;
  /** Final metrics, flattened to dotted names. */
  metrics: Readonly<Record<string, number>>;
  createdAt: Date;
}

import { readdirSync } from 'node:fs';
import type { Resources } from '../../schemas/resources.js';

export interface ResourceSupport {
  /** Why the stage cannot run here at all, or null. */
  refusal: string | null;
  /** One warning naming the fields this backend does not apply, or null. */
  warning: string | null;
}

/**
 * What a backend that runs stages on this machine (the local CLI, the plain runner) does
 * with a stage's `resources`: GPUs asked of a machine without any are refused (the stage
 * would fail, or worse, train on the CPU for days); every other field is ignored, and
 * said so, since such a backend sets no limits.
 */
export function localResourceSupport(
  stage: string,
  resources: Resources,
  gpusHere = nvidiaGpuCount(),
): ResourceSupport {
  const asked = FIELDS.filter((field) => resources[field] !== undefined);
  if (resources.gpus !== undefined && resources.gpus > gpusHere) {
    return {
      refusal: `resources.gpus: stage ${stage} asks for ${resources.gpus} GPU(s) and this machine has ${gpusHere}; run it on a cluster (--backend slurm)`,
      warning: null,
    };
  }
  const ignored = asked.filter((field) => field !== 'gpus');
  return {
    refusal: null,
    warning:
      ignored.length === 0
        ? null
        : `stage ${stage}: ${ignored.map((field) => `resources.${field}`).join(', ')} ignored: this backend runs stages on this machine without limits (they apply with --backend slurm)`,
  };
}

const FIELDS: readonly (keyof Resources)[] = ['gpus', 'cpus', 'memory', 'time', 'partition'];

/** The NVIDIA GPUs this machine has: its `/dev/nvidiaN` devices. */
export function nvidiaGpuCount(): number {
  try {
    return readdirSync('/dev').filter((name) => /^nvidia\d+$/.test(name)).length;
  } catch {
    return 0;
  }
}

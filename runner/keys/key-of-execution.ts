import type { KeyInputs } from '../../schemas/key-inputs.js';
import { cacheKeyOf } from './cache-key.js';
import type { ReadSetProbe } from './read-set-probe.js';
import type { ReadTrace } from './read-trace.js';
import type { StageKeyMaterial } from './stage-key-inputs.js';

/**
 * The key a successful execution is stored under. Traced and complete, it is its traced
 * inputs plus the read set; a file it read that changed while it ran leaves it unstored
 * (its digest would not be what it read). Not traced (or its trace incomplete: `false`
 * when no trace could be read), it is the untraced key, and its inputs say why.
 */
export async function keyOfExecution(options: {
  stage: string;
  material: StageKeyMaterial;
  traced: ReadTrace | false | null;
  probe: ReadSetProbe;
  exclude: string[];
  since: { stage: number; run: number };
  cacheKey: string | null;
}): Promise<{ keyInputs: KeyInputs; cacheKey: string | null; notes: string[] }> {
  const { material, traced } = options;
  if (traced === null || material.traceable === null) {
    return { keyInputs: material.inputs, cacheKey: options.cacheKey, notes: [] };
  }
  if (traced === false || traced.untraced !== null) {
    const untraced = traced === false ? 'its trace could not be read' : traced.untraced;
    return { keyInputs: { ...material.inputs, untraced }, cacheKey: options.cacheKey, notes: [] };
  }
  const recorded = await options.probe.record(traced, options.exclude, options.since);
  const keyInputs = { ...material.traceable, readSet: recorded.readSet };
  if (recorded.changedWhileRunning.length === 0)
    return { keyInputs, cacheKey: cacheKeyOf(keyInputs), notes: [] };
  const changed = recorded.changedWhileRunning.map((file) => options.probe.show(file)).join(', ');
  return {
    keyInputs,
    cacheKey: null,
    notes: [`${options.stage}: not cached: ${changed} changed while it ran`],
  };
}

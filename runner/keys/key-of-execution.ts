import type { KeyInputs } from '../../schemas/key-inputs.js';
import { cacheKeyOf } from './cache-key.js';
import type { ReadSetProbe } from './read-set-probe.js';
import type { ReadTrace } from './read-trace.js';
import type { StageKeyMaterial } from './stage-key-inputs.js';

/**
 * The key a successful execution is stored under. Traced and complete, it is its traced
 * inputs plus the read set; a file it read that changed while it ran leaves it unstored
 * (its digest would not be what it read), and so does a listing that hides outs of other
 * stages it does not declare (what it computed depends on whether they ran before it).
 * Not traced (or its trace incomplete: `false` when no trace could be read), it is the
 * untraced key, and its inputs say why.
 */
export async function keyOfExecution(options: {
  stage: string;
  material: StageKeyMaterial;
  traced: ReadTrace | false | null;
  probe: ReadSetProbe;
  exclude: string[];
  since: { stage: number; run: number };
  cacheKey: string | null;
  /** Files fluksio rewrote while the stage ran and put back byte for byte (ReadSetProbe.record). @defaultValue none */
  putBack?: ReadonlySet<string>;
}): Promise<{ keyInputs: KeyInputs; cacheKey: string | null; notes: string[] }> {
  const { material, traced } = options;
  if (traced === null || material.traceable === null) {
    return { keyInputs: material.inputs, cacheKey: options.cacheKey, notes: [] };
  }
  if (traced === false || traced.untraced !== null) {
    const untraced = traced === false ? 'its trace could not be read' : traced.untraced;
    return { keyInputs: { ...material.inputs, untraced }, cacheKey: options.cacheKey, notes: [] };
  }
  const recorded = await options.probe.record(traced, options.exclude, options.since, options.putBack);
  const keyInputs = { ...material.traceable, readSet: recorded.readSet };
  const notes: string[] = [];
  if (recorded.changedWhileRunning.length > 0) {
    const changed = recorded.changedWhileRunning.map((file) => options.probe.show(file)).join(', ');
    notes.push(`${options.stage}: not cached: ${changed} changed while it ran`);
  }
  const listed = options.probe.undeclaredOutsListed(recorded.readSet, options.stage);
  if (listed.length > 0) {
    notes.push(`${options.stage}: not cached: it ${listed.join(', and ')}; add them to its deps`);
  }
  return { keyInputs, cacheKey: notes.length === 0 ? cacheKeyOf(keyInputs) : null, notes };
}

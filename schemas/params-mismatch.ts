import { canonicalJson } from './canonical-json.js';
import type { ParamValue } from './key-inputs.js';

type ParamSet = Readonly<Record<string, ParamValue>>;

/**
 * Why the params a runner resolved at the run's commit are not the params the run was
 * queued with, or null when they are: every queued value must be resolved to the same
 * typed value (`1` is not `"1"`, nor `1.5`), and none dropped. A param the runner adds is
 * a declared default the submitter left out (a submitter may send only what it sets):
 * it ran, so it is no mismatch. The sentence names each param that differs, with its type,
 * because the two sides print alike (`0.1` and `"0.1"` differ only in type).
 */
export function paramsMismatch(queued: ParamSet, resolved: ParamSet): string | null {
  const differences: string[] = [];
  for (const [key, value] of Object.entries(queued)) {
    if (!Object.hasOwn(resolved, key)) {
      differences.push(`'${key}' was queued as ${shown(value)} but not resolved`);
      continue;
    }
    const ran = resolved[key] as ParamValue;
    if (canonicalJson(ran) !== canonicalJson(value)) {
      differences.push(`'${key}' was queued as ${shown(value)} and resolved as ${shown(ran)}`);
    }
  }
  if (differences.length === 0) return null;
  return `The runner resolved the params differently from how the run was queued, so nothing ran: ${differences.join('; ')}`;
}

function shown(value: ParamValue): string {
  return `${JSON.stringify(value)} (a ${typeof value})`;
}

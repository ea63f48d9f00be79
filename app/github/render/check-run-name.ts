import { formatValue } from '../../../core/text/format.js';
import type { ParamValue } from '../../../schemas/key-inputs.js';
import { clip } from './markdown.js';
import { GITHUB_LIMITS } from './render-check-run.js';

/**
 * The stable check-run name of DESIGN §8, usable as a required check: the base name, or
 * for a sweep member the base name with its swept params, `fluksio (lr=0.1, seed=2)`.
 * Capped at 100 characters; a cut name ends with a hash of the full one, so two members
 * differing only past the cut still get different names.
 */
export function checkRunName(baseName: string, swept: Record<string, ParamValue> | null): string {
  const entries = Object.entries(swept ?? {});
  if (entries.length === 0) return baseName;
  const full = `${baseName} (${entries.map(([key, value]) => `${key}=${formatValue(value)}`).join(', ')})`;
  if (full.length <= GITHUB_LIMITS.checkName) return full;
  const hash = ` #${fnv1a(full)})`;
  return `${clip(full, GITHUB_LIMITS.checkName - hash.length)}${hash}`;
}

/** FNV-1a, 32 bits, as 8 hex digits: a short stable tag, not a security measure. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

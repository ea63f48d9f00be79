import { formatValue } from '../../schemas/format.js';
import type { ParamValue } from '../../schemas/key-inputs.js';
import { GITHUB_LIMITS } from './github-limits.js';
import { clip } from './markdown.js';

/**
 * The stable check-run name of DESIGN §8, usable as a required check: the base name, or
 * for a sweep member the base name with its swept params, `fluksio (lr=0.1, seed=2)`.
 * Capped at 100 characters; a cut name ends with a hash of the full one, so two members
 * differing only past the cut still get different names. The app and the action both
 * name their check runs here, so a required check means the same thing on either.
 */
export function checkRunName(baseName: string, swept: Readonly<Record<string, ParamValue>> | null): string {
  const entries = Object.entries(swept ?? {});
  if (entries.length === 0) return baseName;
  const full = `${baseName} (${entries.map(([key, value]) => `${key}=${formatValue(value)}`).join(', ')})`;
  if (full.length <= GITHUB_LIMITS.checkName) return full;
  const hash = ` #${fnv1a(full)})`;
  return `${clip(full, GITHUB_LIMITS.checkName - hash.length)}${hash}`;
}

/** The params a sweep varies, from one member's params: what names its check run. */
export function sweptParams(
  params: Readonly<Record<string, ParamValue>>,
  swept: readonly string[],
): Record<string, ParamValue> {
  return Object.fromEntries(
    swept.flatMap((key) => {
      const value = params[key];
      return value === undefined ? [] : [[key, value]];
    }),
  );
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

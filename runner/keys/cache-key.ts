import { digestOf } from '../../core/canonical-json.js';
import type { KeyInputs } from '../../schemas/key-inputs.js';

/**
 * The cache key of a stage (DESIGN §5): sha256 of the canonical JSON of its key
 * inputs. The code manifest blob is left out: it only names the files behind the code
 * digest for "why it re-ran", and the digest already decides whether code changed. The
 * untraced reason is left out too: a Python command learns it only once it ran, and its
 * exact key must be known before.
 */
export function cacheKeyOf(inputs: KeyInputs): string {
  const { untraced: _untraced, ...rest } = inputs;
  return digestOf({ ...rest, code: rest.code ? { digest: rest.code.digest } : null });
}

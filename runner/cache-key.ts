import { digestOf } from '../schemas/canonical-json.js';
import type { KeyInputs } from '../schemas/key-inputs.js';

/**
 * The cache key of a stage (DESIGN §5): sha256 of the canonical JSON of its key
 * inputs. The code manifest blob is left out: it only names the files behind the code
 * digest for "why it re-ran", and the digest already decides whether code changed.
 */
export function cacheKeyOf(inputs: KeyInputs): string {
  return digestOf({ ...inputs, code: inputs.code ? { digest: inputs.code.digest } : null });
}

import { digestOf } from './canonical-json.js';
import type { KeyInputs } from '../schemas/key-inputs.js';

/**
 * The manifest key of a traced stage: everything its cache key holds except what it
 * read (ccache's "direct mode" manifest). Cache entries of one manifest key differ only
 * by their read sets; a lookup takes the recent ones and keeps the first whose every
 * read still has its digest. The code manifest blob and the untraced reason are never
 * part of a key.
 */
export function manifestKeyOf(inputs: KeyInputs): string {
  const { untraced: _untraced, readSet: _readSet, ...rest } = inputs;
  return digestOf({ ...rest, code: rest.code ? { digest: rest.code.digest } : null, manifest: true });
}

/** Read sets a lookup checks at most: the recent states of the code a stage read. */
export const CANDIDATE_LIMIT = 16;

import { distance } from 'fastest-levenshtein';

/**
 * The known key a misspelt one most likely means (`dep` → `deps`, `cmnd` → `cmd`): the
 * nearest by edit distance, at most 2 edits and fewer than half its letters; else null.
 */
export function closestKey(key: string, known: readonly string[]): string | null {
  let best: { key: string; edits: number } | null = null;
  for (const candidate of known) {
    const edits = distance(key.toLowerCase(), candidate);
    if (edits > 2 || edits * 2 >= Math.max(key.length, candidate.length)) continue;
    if (!best || edits < best.edits) best = { key: candidate, edits };
  }
  return best?.key ?? null;
}

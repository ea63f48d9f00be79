import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted at every depth, so equal values always serialize to
 * equal bytes: what every digest in fluksio (cache keys, params digests) hashes.
 * `undefined` members are dropped, as JSON.stringify drops them.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) sorted[key] = sortKeys(member);
    }
    return sorted;
  }
  return value;
}

/** Hex sha256 of a string (as UTF-8) or bytes, one-shot: a quarter of a `createHash` object's time. */
export function sha256Hex(data: string | Uint8Array): string {
  return hash('sha256', data, 'hex');
}

/** sha256 of the canonical JSON of a value: the digest of a structured input. */
export function digestOf(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

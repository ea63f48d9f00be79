/**
 * What PostgreSQL cannot store: NUL, which no `text` or `jsonb` value may hold, and a lone
 * UTF-16 surrogate (a high one not followed by a low one, or a low one not preceded by a
 * high one), which `jsonb` refuses. Matched code unit by code unit (no `u` flag).
 */
// eslint-disable-next-line no-control-regex -- NUL is exactly what this looks for.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const EVERY_UNSTORABLE = new RegExp(UNSTORABLE.source, 'g');

/**
 * `text` as PostgreSQL can store it: each NUL and lone surrogate becomes U+FFFD (�), what
 * an undecodable byte of a stage's output already becomes. Anything else is kept as it is.
 */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(EVERY_UNSTORABLE, '\uFFFD') : text;
}

/**
 * A parsed JSON value (or any tree of plain objects, arrays and scalars) with every string
 * made storable, object keys included: what arrives in a request becomes data the database
 * can hold before it is validated, whatever field it is in. Objects are rebuilt with
 * `Object.fromEntries`, so a `__proto__` key stays an own property.
 */
export function storableJson(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value);
  if (Array.isArray(value)) return value.map(storableJson);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, entry]) => [storableText(key), storableJson(entry)]),
  );
}

/**
 * Where a parsed value holds a string PostgreSQL cannot store (as keys: the path of each
 * such string, or of the object whose key it is). A file that holds one is refused with
 * these paths rather than stored altered: a changed byte would change the run's digests.
 */
export function unstorablePaths(value: unknown, path: PropertyKey[] = []): PropertyKey[][] {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? [path] : [];
  if (value === null || typeof value !== 'object') return [];
  const entries: [PropertyKey, unknown][] = Array.isArray(value)
    ? value.map((entry, index) => [index, entry])
    : Object.entries(value);
  return entries.flatMap(([key, entry]) =>
    typeof key === 'string' && UNSTORABLE.test(key) ? [path] : unstorablePaths(entry, [...path, key]),
  );
}

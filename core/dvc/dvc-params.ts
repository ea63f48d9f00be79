import { isMap, isScalar, isSeq, parseDocument, type Node } from 'yaml';
import type { ParamSpec } from '../../schemas/pipeline.js';
import { formatReference } from './dvc-template.js';

/** A params file as DVC reads it: its values, and which numbers were written as floats. */
export interface DvcParamsFile {
  data: Record<string, unknown>;
  /** Leaf names (`train.lr`) whose number was written with a point or exponent: `1.0` is a float. */
  floats: ReadonlySet<string>;
}

/**
 * Parses a YAML or JSON params file (JSON is YAML), keeping whether each number was written
 * as a float, since `1.0` and `1` are one number in JavaScript but not to the stage that
 * reads `featurize.max_features=400` back. Throws an Error with the first syntax problem.
 */
export function parseDvcParamsFile(text: string): DvcParamsFile {
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const first = document.errors[0];
  if (first) throw new Error(`YAML syntax error: ${first.message.split('\n')[0]}`);
  const floats = new Set<string>();
  const toValue = (node: unknown, path: (string | number)[]): unknown => {
    if (isMap(node)) {
      const entries: [string, unknown][] = [];
      for (const pair of node.items) {
        const key = String(isScalar(pair.key) ? pair.key.value : pair.key);
        entries.push([key, toValue(pair.value, [...path, key])]);
      }
      return Object.fromEntries(entries);
    }
    if (isSeq(node)) return node.items.map((item, index) => toValue(item, [...path, index]));
    if (isScalar(node)) {
      const source = node.range ? text.slice(node.range[0], node.range[1]) : '';
      if (typeof node.value === 'number' && /[.eE]|inf|nan/i.test(source)) floats.add(formatReference(path));
      return node.value;
    }
    return (node as Node | null)?.toJSON() ?? null;
  };
  const data = toValue(document.contents, []);
  if (data === null || data === undefined) return { data: {}, floats };
  if (typeof data !== 'object' || Array.isArray(data)) throw new Error('expected a dictionary of params');
  return { data: data as Record<string, unknown>, floats };
}

/** Every leaf under `path` (a dictionary's leaves, or the value itself), as [name, value]. */
export function paramLeaves(data: unknown, path: (string | number)[]): [string, unknown][] {
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    return Object.entries(data).flatMap(([key, value]) => paramLeaves(value, [...path, key]));
  }
  return [[formatReference(path), data]];
}

/**
 * The fluksio param a params-file value becomes, typed by what the file holds: a boolean
 * `bool`, a whole number `int` (unless written as a float), a number `float`, text
 * `string`. A list or null becomes its JSON text, so a change still re-runs the stage.
 */
export function paramSpecOf(value: unknown, isFloat: boolean): ParamSpec {
  if (typeof value === 'boolean') return { type: 'bool', default: value };
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && !isFloat
      ? { type: 'int', default: value }
      : { type: 'float', default: value };
  }
  if (typeof value === 'string') return { type: 'string', default: value };
  return { type: 'string', default: JSON.stringify(value) };
}

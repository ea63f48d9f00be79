import { isMap, isScalar, isSeq, type Node } from 'yaml';
import { aliasFollower, DVC_YAML_OPTIONS, isMergePair, keyText, mergeSources } from './yaml-merge-keys.js';
import type { ParamSpec } from '../../schemas/pipeline.js';
import { formatReference } from './dvc-template.js';
import { parseYamlDocument } from '../text/parse-yaml-document.js';

/** A params file as DVC reads it: its values, and which numbers were written as floats. */
export interface DvcParamsFile {
  data: Record<string, unknown>;
  /** Leaf names (`train.lr`) whose number was written with a point or exponent: `1.0` is a float. */
  floats: ReadonlySet<string>;
  /**
   * Leaf names (`seed`, `seeds[1]`) of whole numbers past 2^53, which a JavaScript number
   * cannot hold exactly (Python's can), by their text: `data` has them rounded.
   */
  inexact: ReadonlyMap<string, string>;
}

/**
 * At most this many values are read from one params file, aliases expanded: a few anchors
 * aliased in turn (`b: [*a, *a]`, `c: [*b, *b]`, …) otherwise expand to billions.
 */
const MAX_EXPANDED_VALUES = 100_000;

/** A number written as a float (`1.0`, `1e-3`), until its leaf's name is known. */
class WrittenAsFloat {
  constructor(readonly value: number) {}
}

/** A whole number a JavaScript number cannot hold exactly, with its text, until its leaf's name is known. */
class InexactInteger {
  constructor(
    readonly value: number,
    readonly text: string,
  ) {}
}

/**
 * Parses a YAML or JSON params file (JSON is YAML) into the values a stage's Python reads
 * with yaml.safe_load: aliases followed and `<<` merge keys expanded (a mapping's own keys
 * win, then the merged mappings in order), keeping whether each number was written as a
 * float, since `1.0` and `1` are one number in JavaScript but not to the stage that reads
 * `featurize.max_features=400` back. Throws an Error with the first problem.
 */
export function parseDvcParamsFile(text: string): DvcParamsFile {
  const document = parseYamlDocument(text, DVC_YAML_OPTIONS);
  const first = document.errors[0];
  if (first) throw new Error(`YAML syntax error: ${first.message.split('\n')[0]}`);
  const follow = aliasFollower(document);
  let expanded = 0;
  const expand = (node: unknown, open: ReadonlySet<unknown>): unknown => {
    if (++expanded > MAX_EXPANDED_VALUES) {
      throw new Error(`its aliases expand to more than ${MAX_EXPANDED_VALUES} values`);
    }
    const target = follow(node);
    if (open.has(target)) throw new Error('an alias names a value that contains it');
    const inner = new Set([...open, target]);
    if (isMap(target)) {
      const entries = new Map<string, unknown>();
      for (const source of mergeSources(target, follow)) {
        for (const [key, value] of Object.entries(expand(source, inner) as Record<string, unknown>)) {
          if (!entries.has(key)) entries.set(key, value);
        }
      }
      for (const pair of target.items) {
        if (!isMergePair(pair)) entries.set(keyText(pair), expand(pair.value, inner));
      }
      return Object.fromEntries(entries);
    }
    if (isSeq(target)) return target.items.map((item) => expand(item, inner));
    if (isScalar(target)) {
      const source = target.range ? text.slice(target.range[0], target.range[1]) : '';
      if (typeof target.value !== 'number') return target.value;
      if (/[.eE]|inf|nan/i.test(source)) return new WrittenAsFloat(target.value);
      return Number.isSafeInteger(target.value) ? target.value : new InexactInteger(target.value, source);
    }
    return (target as Node | null | undefined)?.toJSON() ?? null;
  };
  const floats = new Set<string>();
  const inexact = new Map<string, string>();
  const unwrap = (value: unknown, path: (string | number)[]): unknown => {
    if (value instanceof WrittenAsFloat) {
      floats.add(formatReference(path));
      return value.value;
    }
    if (value instanceof InexactInteger) {
      inexact.set(formatReference(path), value.text);
      return value.value;
    }
    if (Array.isArray(value)) return value.map((item, index) => unwrap(item, [...path, index]));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value).map(([key, inner]) => [key, unwrap(inner, [...path, key])]),
      );
    }
    return value;
  };
  const data = unwrap(expand(document.contents, new Set()), []);
  if (data === null || data === undefined) return { data: {}, floats, inexact };
  if (typeof data !== 'object' || Array.isArray(data)) throw new Error('expected a dictionary of params');
  return { data: data as Record<string, unknown>, floats, inexact };
}

/**
 * Why the param `name` of a params file cannot be carried exactly (a whole number in it
 * past 2^53, which would reach the stage rounded and share the key of its neighbour), or
 * null. `fileName` is where it is, for the sentence.
 */
export function inexactParamProblem(file: DvcParamsFile, name: string, fileName: string): string | null {
  for (const [leaf, text] of file.inexact) {
    if (leaf === name || leaf.startsWith(`${name}.`) || leaf.startsWith(`${name}[`)) {
      return `${leaf} in ${fileName} is ${text}, a whole number past 2^53 that fluksio cannot carry exactly; quote it ("${text}") to make it text`;
    }
  }
  return null;
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

import {
  isAlias,
  isMap,
  isNode,
  isScalar,
  isSeq,
  visit,
  type Alias,
  type Document,
  type Node,
  type Pair,
  type YAMLMap,
} from 'yaml';

/**
 * How a DVC project's YAML is parsed: with YAML 1.1's `<<` merge keys, which Python's
 * yaml.safe_load (what a stage reads params.yaml with) and DVC's ruamel both expand. The
 * `yaml` library's default YAML 1.2 schema would keep `<<` as an ordinary key instead.
 */
export const DVC_YAML_OPTIONS = { prettyErrors: false, merge: true } as const;

/** Follows an alias to the node it names; any other node is itself. */
export type FollowAlias = (node: unknown) => unknown;

/**
 * Follows a document's aliases as YAML does: each to the last node before it whose anchor
 * has its name. The document is read once (the `yaml` library's Alias.resolve reads all
 * of it for each alias, which a file with thousands of them makes minutes). For the
 * document as it is now: a changed document needs a new one. The function throws an
 * Error for an alias no anchor before it names.
 */
export function aliasFollower(document: Document): FollowAlias {
  const targets = new Map<Alias, Node>();
  const anchors = new Map<string, Node>();
  visit(document, (_key, node) => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target) targets.set(node, target);
    } else if (isNode(node) && node.anchor) {
      anchors.set(node.anchor, node);
    }
  });
  return (node) => {
    if (!isAlias(node)) return node;
    const target = targets.get(node);
    if (target === undefined) throw new Error(`alias *${node.source} names no anchor before it`);
    return target;
  };
}

/** Whether a mapping's pair is a `<<` merge key (only a plain `<<` is: `"<<"` is a key like any). */
export function isMergePair(pair: Pair): boolean {
  const key = pair.key;
  return isScalar(key) && typeof key.value === 'symbol' && key.value.description === '<<';
}

/**
 * The mappings a mapping's merge keys bring in, in the order they win (YAML 1.1: `<<: [*a,
 * *b]` takes a key from `a` before `b`; the mapping's own keys win over all of them).
 * Throws an Error when a merge key names anything but mappings, as yaml.safe_load does.
 */
export function mergeSources(map: YAMLMap, follow: FollowAlias): YAMLMap[] {
  const sources: YAMLMap[] = [];
  for (const pair of map.items) {
    if (!isMergePair(pair)) continue;
    const value = follow(pair.value);
    const items: unknown[] = isSeq(value) ? value.items : [value];
    for (const item of items) {
      const source = follow(item);
      if (!isMap(source)) throw new Error('a << merge key must name a mapping or a list of mappings');
      sources.push(source);
    }
  }
  return sources;
}

/**
 * The node a mapping gives `key` once its merge keys are expanded: its own pair's value,
 * else the first merged mapping's that has it (merged mappings may merge in turn).
 * Undefined when neither holds it.
 */
export function mergedValue(
  map: YAMLMap,
  key: string,
  follow: FollowAlias,
  seen: ReadonlySet<YAMLMap> = new Set(),
): Node | undefined {
  if (seen.has(map)) throw new Error('an alias names a value that contains it');
  const own = map.items.find((pair) => !isMergePair(pair) && keyText(pair) === key);
  if (own) return own.value as Node;
  for (const source of mergeSources(map, follow)) {
    const found = mergedValue(source, key, follow, new Set([...seen, map]));
    if (found !== undefined) return found;
  }
  return undefined;
}

/** A mapping key as a params name segment: `1:` and `"1":` both read as `1`. */
export function keyText(pair: Pair): string {
  return String(isScalar(pair.key) ? pair.key.value : pair.key);
}

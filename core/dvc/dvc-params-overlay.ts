import { isAlias, isMap, isNode, isSeq, Scalar, visit, type Document, type Node, type YAMLMap } from 'yaml';
import { formatReference } from './dvc-template.js';
import { parseDvcParamsFile } from './dvc-params.js';
import { aliasFollower, DVC_YAML_OPTIONS, isMergePair, keyText, mergedValue } from './yaml-merge-keys.js';
import type { ParamValue } from '../../schemas/key-inputs.js';
import type { ParamSpec } from '../../schemas/pipeline.js';
import { parseYamlDocument } from '../text/parse-yaml-document.js';

const DEFAULT_PARAMS = 'params.yaml';

/** The params file a DVC param name lives in and its path there: `custom.yaml:lr` → custom.yaml, [lr]. */
export function dvcParamLocation(name: string): { file: string; path: (string | number)[] } {
  const colon = name.indexOf(':');
  const file = colon >= 0 ? name.slice(0, colon) : DEFAULT_PARAMS;
  const key = colon >= 0 ? name.slice(colon + 1) : name;
  const path = key
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  return { file, path };
}

/**
 * A DVC params file's text with the run's values of `listed` written in, as `dvc exp run
 * -S` writes them: only values that differ from the file's are set, comments and layout
 * kept; a float param's whole number keeps its point (`1.0`). A list param (carried as its
 * JSON text) is written back as the list. A value the file holds through an alias or a
 * `<<` merge key is written where the stage reads it, that mapping's own key winning over
 * the merged one: the anchored value, which others share, is left as it is. Null when
 * nothing differs, so the file is left as it is. Throws an Error when the text is not YAML.
 */
export function overlayDvcParams(
  text: string,
  listed: readonly { path: (string | number)[]; value: ParamValue; spec: ParamSpec | undefined }[],
): string | null {
  const document = parseYamlDocument(text, DVC_YAML_OPTIONS);
  const first = document.errors[0];
  if (first) throw new Error(`YAML syntax error: ${first.message.split('\n')[0]}`);
  let changed = false;
  // An anchored value set changes its aliases too: one listed before it (`train.lr: *lr`
  // before `defaults.lr`) is set again, as its own value. Each pass that sets anything
  // replaces an alias or a merged value, so the passes end (one more than there are params).
  for (let settled = false, passes = 0; !settled; passes += 1) {
    settled = true;
    for (const { path, value, spec } of listed) {
      const old = valueAt(parseDvcParamsFile(document.toString()).data, path);
      // A name the file does not hold (a `vars` value in cmd) is not added to it.
      if (old === undefined) continue;
      const wanted =
        typeof old === 'object' && old !== null && typeof value === 'string' ? parseJson(value) : value;
      if (JSON.stringify(old) === JSON.stringify(wanted)) continue;
      if (passes > listed.length) {
        throw new Error(`${formatReference([...path])} does not read back as the value written to it`);
      }
      const node = document.createNode(wanted);
      if (node instanceof Scalar && spec?.type === 'float') node.minFractionDigits = 1;
      setOwnValue(document, path, node);
      changed = true;
      settled = false;
    }
  }
  return changed ? document.toString() : null;
}

function valueAt(data: unknown, path: readonly (string | number)[]): unknown {
  let node = data;
  for (const key of path) {
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

/**
 * Sets the value at `path` (which the file holds, merges and aliases followed) in the
 * mapping or list that holds it itself: on the way there, a mapping or list reached
 * through an alias or a merge key becomes that mapping's own copy, so only this path
 * changes. An anchor on the value replaced stays on its new value, so its aliases still
 * resolve.
 */
function setOwnValue(document: Document, path: readonly (string | number)[], node: Node): void {
  const follow = aliasFollower(document);
  let parent: unknown = document.contents;
  for (const [index, key] of path.entries()) {
    const pair = isMap(parent)
      ? parent.items.find((each) => !isMergePair(each) && keyText(each) === String(key))
      : undefined;
    const own: unknown = isMap(parent) ? pair?.value : isSeq(parent) ? parent.items[Number(key)] : undefined;
    const found = isMap(parent) && own === undefined ? mergedValue(parent, String(key), follow) : own;
    if (found === undefined || !(isMap(parent) || isSeq(parent))) {
      throw new Error(`${formatReference([...path])} is not in the file`);
    }
    let next: Node;
    if (index === path.length - 1) {
      if (isNode(own) && !isAlias(own) && own.anchor) node.anchor = own.anchor;
      next = node;
    } else {
      const target = follow(found);
      if (target === found && own !== undefined) {
        parent = target;
        continue;
      }
      next = ownCopy(target as Node);
    }
    if (isSeq(parent)) parent.items[Number(key)] = next;
    else if (pair) pair.value = next;
    else (parent as YAMLMap).items.push(document.createPair(key, next));
    parent = next;
  }
}

/** A copy of a shared node without its anchors, so no alias after it names the copy. */
function ownCopy(node: Node): Node {
  const copy = node.clone() as Node;
  visit(copy, (_key, each) => {
    if (isNode(each) && !isAlias(each)) each.anchor = undefined;
  });
  return copy;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

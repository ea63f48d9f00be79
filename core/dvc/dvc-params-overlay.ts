import { isScalar, parseDocument, Scalar } from 'yaml';
import type { ParamValue } from '../../schemas/key-inputs.js';
import type { ParamSpec } from '../../schemas/pipeline.js';

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
 * JSON text) is written back as the list. Null when nothing differs, so the file is left
 * as it is. Throws an Error when the text is not YAML.
 */
export function overlayDvcParams(
  text: string,
  listed: readonly { path: (string | number)[]; value: ParamValue; spec: ParamSpec | undefined }[],
): string | null {
  const document = parseDocument(text, { prettyErrors: false, uniqueKeys: true });
  const first = document.errors[0];
  if (first) throw new Error(`YAML syntax error: ${first.message.split('\n')[0]}`);
  let changed = false;
  for (const { path, value, spec } of listed) {
    const current: unknown = document.getIn(path, true);
    // A name the file does not hold (a `vars` value in cmd) is not added to it.
    if (current === undefined) continue;
    const old = isScalar(current)
      ? current.value
      : (current as { toJSON?: () => unknown } | undefined)?.toJSON?.();
    const wanted =
      typeof old === 'object' && old !== null && typeof value === 'string' ? parseJson(value) : value;
    if (JSON.stringify(old) === JSON.stringify(wanted)) continue;
    const node = document.createNode(wanted);
    if (node instanceof Scalar && spec?.type === 'float') node.minFractionDigits = 1;
    document.setIn(path, node);
    changed = true;
  }
  return changed ? document.toString() : null;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

import { stringify } from 'yaml';
import type { ParamValue } from '../../schemas/key-inputs.js';

/**
 * What a stage's params file holds (the pipeline's `params_file`): the params the stage
 * lists, with this run's values — the same ones its `FLUKSIO_PARAM_*` variables and its
 * cache key carry, so nothing it reads there is missing from its key. A DVC-style dotted
 * name nests (`train.n_est: 50` → `train: {n_est: 50}`), as in a `params.yaml`; a name
 * that cannot nest under another param's value stays whole. YAML for a `.yaml`/`.yml`
 * file name, JSON for `.json`.
 */
export function paramsFileText(
  fileName: string,
  listed: readonly string[],
  values: Readonly<Record<string, ParamValue>>,
): string {
  const tree: Record<string, unknown> = {};
  for (const name of listed) {
    const value = values[name];
    if (value !== undefined) place(tree, name, value);
  }
  return fileName.endsWith('.json') ? `${JSON.stringify(tree, null, 2)}\n` : stringify(tree);
}

function place(tree: Record<string, unknown>, name: string, value: ParamValue): void {
  const parts = name.split('.');
  let node = tree;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (next === undefined) node[part] = {};
    else if (typeof next !== 'object' || next === null) {
      tree[name] = value;
      return;
    }
    node = node[part] as Record<string, unknown>;
  }
  const leaf = parts.at(-1) as string;
  if (typeof node[leaf] === 'object' && node[leaf] !== null) tree[name] = value;
  else node[leaf] = value;
}

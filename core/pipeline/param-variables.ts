import type { ParamValue } from '../../schemas/key-inputs.js';

/**
 * The environment variable a param reaches stages as: `lr` → `FLUKSIO_PARAM_LR`; a DVC
 * name's other characters become `_` (`featurize.max_features` → `FLUKSIO_PARAM_FEATURIZE_MAX_FEATURES`).
 */
export function paramVariableName(param: string): string {
  return `FLUKSIO_PARAM_${param.toUpperCase().replace(/[^A-Z0-9_]/g, '_')}`;
}

/**
 * The variables that give a stage its params (README "Parameters"), only those it lists
 * so that every value it can read is in its cache key. A variable is the safe way to use
 * a value inside shell code that fluksio cannot quote, e.g. `"$FLUKSIO_PARAM_NOTE"`.
 */
export function paramVariables(
  listed: readonly string[],
  values: Readonly<Record<string, ParamValue>>,
): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const param of listed) {
    const value = values[param];
    if (value !== undefined) variables[paramVariableName(param)] = String(value);
  }
  return variables;
}

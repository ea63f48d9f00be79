import type { ParamValue } from '../../schemas/key-inputs.js';

/** One param of two runs side by side. */
export interface ParamDiffRow {
  name: string;
  /** The compared-against run's value; null when it has none. */
  against: ParamValue | null;
  /** This run's value; null when it has none. */
  value: ParamValue | null;
  changed: boolean;
}

/**
 * Two runs' params side by side (`fluksio diff`, as `dvc params diff`): every param of
 * either, this run's in its order first, then those only the other has.
 */
export function diffParams(
  current: Readonly<Record<string, ParamValue>>,
  against: Readonly<Record<string, ParamValue>> | null,
): ParamDiffRow[] {
  const names = [...new Set([...Object.keys(current), ...Object.keys(against ?? {})])];
  return names.map((name) => {
    const value = current[name] ?? null;
    const before = against?.[name] ?? null;
    return { name, against: before, value, changed: value !== before };
  });
}

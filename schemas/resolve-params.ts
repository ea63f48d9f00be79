import type { ParamValue } from './key-inputs.js';
import type { ParamAssignment } from './param-assignments.js';
import type { ParamSpec } from './pipeline.js';
import type { Problem } from './problem.js';

/** A sweep makes at most this many runs (DESIGN §4). */
export const MAX_GRID = 32;

export type Params = Record<string, ParamValue>;

export interface ResolvedParams {
  /** One complete parameter set per run: one for a plain run, the grid for a sweep. */
  grid: Params[];
  /** The keys that were swept, in the order given. */
  swept: string[];
  problems: Problem[];
}

/**
 * Turns `key=value` assignments into complete, typed parameter sets for a pipeline:
 * each value parsed by its declared type and checked against min/max/enum, defaults
 * filled in, unknown and missing params named, and sweeps expanded into their grid
 * (first key varying slowest). Returns every problem at once and no grid if any.
 */
export function resolveParams(
  specs: Readonly<Record<string, ParamSpec>>,
  assignments: ParamAssignment[],
): ResolvedParams {
  const problems: Problem[] = [];
  const declared = Object.keys(specs).join(', ') || 'none';
  const axes: [string, ParamValue[]][] = [];
  for (const { key, values } of assignments) {
    const spec = specs[key];
    if (!spec) {
      problems.push({ path: '', message: `Unknown parameter '${key}'; the pipeline declares: ${declared}` });
      continue;
    }
    const parsed: ParamValue[] = [];
    for (const raw of values) {
      const result = parseParamValue(key, spec, raw);
      if ('problem' in result) problems.push({ path: '', message: result.problem });
      else parsed.push(result.value);
    }
    axes.push([key, parsed]);
  }
  for (const [key, spec] of Object.entries(specs)) {
    if (spec.default === undefined && !assignments.some((assignment) => assignment.key === key)) {
      problems.push({
        path: '',
        message: `Parameter '${key}' has no default: give it, e.g. ${key}=${example(spec)}`,
      });
    }
  }
  const size = axes.reduce((product, [, values]) => product * values.length, 1);
  const swept = axes.filter(([, values]) => values.length > 1).map(([key]) => key);
  if (size > MAX_GRID) {
    const factors = axes
      .filter(([, values]) => values.length > 1)
      .map(([key, values]) => `${values.length} ${key}`);
    problems.push({
      path: '',
      message: `The sweep makes ${size} runs (${factors.join(' × ')}); a sweep is at most ${MAX_GRID} runs`,
    });
  }
  if (problems.length > 0) return { grid: [], swept, problems };

  const defaults: Params = {};
  for (const [key, spec] of Object.entries(specs))
    if (spec.default !== undefined) defaults[key] = spec.default;
  let grid: Params[] = [defaults];
  for (const [key, values] of axes) {
    grid = grid.flatMap((params) => values.map((value) => ({ ...params, [key]: value })));
  }
  return { grid, swept, problems: [] };
}

/**
 * One value as its declared type: `Parameter 'lr': "fast" is not a float (e.g. lr=0.1)`.
 * Integers must be exact in every language a stage is written in, so they stay within
 * ±(2^53−1); floats must be finite.
 */
export function parseParamValue(
  key: string,
  spec: ParamSpec,
  raw: string,
): { value: ParamValue } | { problem: string } {
  const fail = (why: string) => ({ problem: `Parameter '${key}': ${JSON.stringify(raw)} ${why}` });
  let value: ParamValue;
  switch (spec.type) {
    case 'int': {
      if (!/^[+-]?\d+$/.test(raw)) return fail(`is not an int (e.g. ${key}=${example(spec)})`);
      const big = BigInt(raw);
      if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < -BigInt(Number.MAX_SAFE_INTEGER)) {
        return fail('is beyond ±9007199254740991 (2^53−1), the largest integer carried exactly');
      }
      value = Number(big);
      break;
    }
    case 'float': {
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw))
        return fail(`is not a float (e.g. ${key}=${example(spec)})`);
      value = Number(raw);
      if (!Number.isFinite(value)) return fail('is not a finite float');
      break;
    }
    case 'bool': {
      if (raw !== 'true' && raw !== 'false') return fail(`is not a bool (${key}=true or ${key}=false)`);
      value = raw === 'true';
      break;
    }
    case 'string':
      value = raw;
      break;
  }
  if (typeof value === 'number' && (spec.type === 'int' || spec.type === 'float')) {
    if (spec.min !== undefined && value < spec.min) return fail(`is below the minimum ${spec.min}`);
    if (spec.max !== undefined && value > spec.max) return fail(`is above the maximum ${spec.max}`);
  }
  if ((spec.type === 'int' || spec.type === 'float' || spec.type === 'string') && spec.enum) {
    if (!(spec.enum as readonly ParamValue[]).includes(value)) {
      return fail(`is not one of ${spec.enum.map((allowed) => String(allowed)).join(', ')}`);
    }
  }
  return { value };
}

/** A value to show in "e.g. key=…": the default, else the first allowed, else a plain one. */
function example(spec: ParamSpec): string {
  if (spec.default !== undefined) return String(spec.default);
  if (spec.type !== 'bool' && spec.enum?.[0] !== undefined) return String(spec.enum[0]);
  if (spec.type === 'int' || spec.type === 'float')
    return String(spec.min ?? (spec.type === 'int' ? 1 : 0.1));
  return spec.type === 'bool' ? 'true' : 'value';
}

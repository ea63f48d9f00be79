import type { ParamValue } from '../../schemas/key-inputs.js';
import type { ParamAssignment } from './param-assignments.js';
import type { ParamSpec } from '../../schemas/pipeline.js';
import type { Problem } from '../problem.js';

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
  const axes: [string, ParamValue[]][] = [];
  for (const { key, values } of assignments) {
    const spec = specs[key];
    if (!spec) {
      problems.push(unknownParam(key, specs));
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
  problems.push(...missingParams(specs, new Set(assignments.map((assignment) => assignment.key))));
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

  let grid: Params[] = [defaultsOf(specs)];
  for (const [key, values] of axes) {
    grid = grid.flatMap((params) => values.map((value) => ({ ...params, [key]: value })));
  }
  return { grid, swept, problems: [] };
}

/**
 * A complete, typed parameter set (a claimed run's: the submitter resolved it against the
 * pipeline it saw, but what runs is this commit's pipeline) checked as typed-in values are:
 * each value by checkParamValue, unknown and missing params named, defaults filled in.
 */
export function resolveTypedParams(
  specs: Readonly<Record<string, ParamSpec>>,
  values: Readonly<Params>,
): { params: Params; problems: [] } | { params: null; problems: Problem[] } {
  const problems: Problem[] = [];
  const params = defaultsOf(specs);
  for (const [key, value] of Object.entries(values)) {
    const spec = specs[key];
    const checked = spec ? checkParamValue(key, spec, value) : null;
    if (checked === null) problems.push(unknownParam(key, specs));
    else if ('problem' in checked) problems.push({ path: `params.${key}`, message: checked.problem });
    else params[key] = checked.value;
  }
  problems.push(...missingParams(specs, new Set(Object.keys(values))));
  return problems.length > 0 ? { params: null, problems } : { params, problems: [] };
}

function unknownParam(key: string, specs: Readonly<Record<string, ParamSpec>>): Problem {
  const declared = Object.keys(specs).join(', ') || 'none';
  return { path: '', message: `Unknown parameter '${key}'; the pipeline declares: ${declared}` };
}

function missingParams(specs: Readonly<Record<string, ParamSpec>>, given: ReadonlySet<string>): Problem[] {
  return Object.entries(specs)
    .filter(([key, spec]) => spec.default === undefined && !given.has(key))
    .map(([key, spec]) => ({
      path: '',
      message: `Parameter '${key}' has no default: give it, e.g. ${key}=${example(spec)}`,
    }));
}

function defaultsOf(specs: Readonly<Record<string, ParamSpec>>): Params {
  const defaults: Params = {};
  for (const [key, spec] of Object.entries(specs))
    if (spec.default !== undefined) defaults[key] = withoutNegativeZero(spec.default);
  return defaults;
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
  switch (spec.type) {
    case 'int':
      if (!/^[+-]?\d+$/.test(raw)) return fail(`is not an int (e.g. ${key}=${example(spec)})`);
      // Through BigInt, so that a value beyond 2^53 is refused rather than rounded.
      return checkParamValue(
        key,
        spec,
        inSafeRange(BigInt(raw)) ? Number(raw) : Infinity,
        JSON.stringify(raw),
      );
    case 'float':
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw))
        return fail(`is not a float (e.g. ${key}=${example(spec)})`);
      return checkParamValue(key, spec, Number(raw), JSON.stringify(raw));
    case 'bool':
      if (raw !== 'true' && raw !== 'false') return fail(`is not a bool (${key}=true or ${key}=false)`);
      return checkParamValue(key, spec, raw === 'true', JSON.stringify(raw));
    case 'string':
      return checkParamValue(key, spec, raw, JSON.stringify(raw));
  }
}

/**
 * A typed value (a claimed run's, a submitted one's) checked as a typed-in one is: its
 * JavaScript type must be the declared type's; ints are whole and within ±(2^53−1); floats
 * finite; then min/max/enum. `shown` is how a problem quotes the value (what was typed).
 */
export function checkParamValue(
  key: string,
  spec: ParamSpec,
  value: ParamValue,
  shown: string = JSON.stringify(String(value)),
): { value: ParamValue } | { problem: string } {
  const fail = (why: string) => ({ problem: `Parameter '${key}': ${shown} ${why}` });
  if (typeof value !== JS_TYPE[spec.type]) {
    return fail(`is a ${typeof value}, but the pipeline declares it ${spec.type}`);
  }
  if (typeof value === 'number') {
    if (spec.type === 'int' && !(Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER)) {
      return Number.isInteger(value) || !Number.isFinite(value)
        ? fail('is beyond ±9007199254740991 (2^53−1), the largest integer carried exactly')
        : fail(`is not an int (e.g. ${key}=${example(spec)})`);
    }
    if (!Number.isFinite(value)) return fail('is not a finite float');
    if ((spec.type === 'int' || spec.type === 'float') && spec.min !== undefined && value < spec.min)
      return fail(`is below the minimum ${spec.min}`);
    if ((spec.type === 'int' || spec.type === 'float') && spec.max !== undefined && value > spec.max)
      return fail(`is above the maximum ${spec.max}`);
  }
  if (spec.enum) {
    if (!(spec.enum as readonly ParamValue[]).includes(value)) {
      const why = spec.description ? ` (${spec.description})` : '';
      return fail(`is not one of ${spec.enum.map((allowed) => String(allowed)).join(', ')}${why}`);
    }
  }
  return { value: withoutNegativeZero(value) };
}

/**
 * −0 as 0. A cache key's canonical JSON, the params digest and `${lr}` all write −0 as
 * `0`, but a YAML params file writes `-0`: `lr=-0` would restore what `lr=0` made although
 * its stage reads another file. Every copy of a value must say what the key says.
 */
function withoutNegativeZero(value: ParamValue): ParamValue {
  return Object.is(value, -0) ? 0 : value;
}

/** The JavaScript type a declared parameter's value has. */
const JS_TYPE = { int: 'number', float: 'number', string: 'string', bool: 'boolean' } as const;

function inSafeRange(value: bigint): boolean {
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  return value <= max && value >= -max;
}

/** A value to show in "e.g. key=…": the default, else the first allowed, else a plain one. */
function example(spec: ParamSpec): string {
  if (spec.default !== undefined) return String(spec.default);
  if (spec.enum?.[0] !== undefined) return String(spec.enum[0]);
  if (spec.type === 'int' || spec.type === 'float')
    return String(spec.min ?? (spec.type === 'int' ? 1 : 0.1));
  return spec.type === 'bool' ? 'true' : 'value';
}

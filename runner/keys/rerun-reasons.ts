import { canonicalJson } from '../../core/canonical-json.js';
import type { Interpreter, KeyInputs, ParamValue } from '../../schemas/key-inputs.js';
import type { PreviousStage } from '../../schemas/previous-stage.js';
import type { ReadSet } from '../../schemas/read-set.js';
import { isLaunchedName } from './command-interpreters.js';

export interface RerunContext {
  /** For a dep produced by a stage of this pipeline: that stage's name. */
  producerOf(dep: string): string | null;
  /** Stages of this run that executed instead of being restored. */
  ranUpstream: ReadonlySet<string>;
  /** What changed in the code scope, when both manifests could be read ("helpers.py changed"). */
  codeChanges: string[] | null;
  /**
   * For a traced stage compared with a traced entry: what it read that differs now
   * (`conf/x.json changed`, `modules added to or removed from lib/`), as the engine found
   * it on disk. Absent, two read sets are compared with each other.
   */
  readChanges?: string[] | null;
}

/**
 * Why a stage re-ran (DESIGN §5): what differs between the inputs it has now and those it
 * had in the run the user compares with (the previous run of the pipeline, see
 * StageCache.previous), one short sentence for each kind of change — `command changed`,
 * `lr 0.01 → 0.1`, `train.py changed`, `data/clean.csv changed (upstream prepare re-ran)`,
 * `helpers.py changed`, `env CUDA_VISIBLE_DEVICES changed`, `python3 is now /opt/py/bin/python3.12
 * (was /usr/bin/python3.11)`, `fingerprint output changed`, `declared outs or metrics
 * changed`. Never empty for a miss.
 */
export function rerunReasons(
  current: KeyInputs,
  previousStage: PreviousStage | null,
  context: RerunContext,
): string[] {
  if (previousStage === null) return ['no earlier run of this stage'];
  const previous = previousStage.keyInputs;
  if (previous.version !== current.version) return ['the cache key recipe changed'];
  const reasons: string[] = [];
  // A param change changes the interpolated command too; the template tells the two apart.
  if (previous.template !== current.template) reasons.push('command changed');

  for (const name of union(Object.keys(previous.params), Object.keys(current.params))) {
    const before = previous.params[name];
    const after = current.params[name];
    if (before === after) continue;
    if (before === undefined) reasons.push(`now uses param ${name} (${show(after)})`);
    else if (after === undefined) reasons.push(`no longer uses param ${name}`);
    else reasons.push(`${name} ${show(before)} → ${show(after)}`);
  }

  for (const dep of union(Object.keys(previous.deps), Object.keys(current.deps))) {
    const before = previous.deps[dep];
    const after = current.deps[dep];
    if (before === after) continue;
    if (before === undefined) reasons.push(`new dep ${dep}`);
    else if (after === undefined) reasons.push(`dep ${dep} removed`);
    else {
      const producer = context.producerOf(dep);
      const upstream = producer && context.ranUpstream.has(producer) ? ` (upstream ${producer} re-ran)` : '';
      reasons.push(`${dep} changed${upstream}`);
    }
  }

  const readChanges = context.readChanges ?? readSetDifferences(previous.readSet, current.readSet);
  if (readChanges !== null && (previous.code === null) !== (current.code === null)) {
    // Both traced: only the `code` globs come and go.
    reasons.push(current.code === null ? 'no longer keyed on code globs' : 'now keyed on code globs');
  } else if ((previous.code === null) !== (current.code === null)) {
    reasons.push(current.code === null ? 'no longer keyed on code (code: false)' : 'now keyed on code');
  } else if (previous.code && current.code && previous.code.digest !== current.code.digest) {
    reasons.push(
      ...(context.codeChanges && context.codeChanges.length > 0 ? context.codeChanges : ['code changed']),
    );
  }

  if (readChanges !== null) reasons.push(...readChanges);

  for (const name of union(Object.keys(previous.env), Object.keys(current.env))) {
    if (previous.env[name] !== current.env[name]) reasons.push(`env ${name} changed`);
  }
  for (const word of union(Object.keys(previous.interpreters), Object.keys(current.interpreters))) {
    const reason = interpreterChange(word, previous.interpreters[word], current.interpreters[word]);
    if (reason) reasons.push(reason);
  }
  if (previous.fingerprint !== current.fingerprint) reasons.push('fingerprint output changed');
  if (previous.paramsFile !== current.paramsFile) {
    reasons.push(`params file ${previous.paramsFile ?? 'none'} → ${current.paramsFile ?? 'none'}`);
  }
  if (previous.pipelineDir !== current.pipelineDir) {
    const where = (dir: string | undefined) => (dir === undefined ? 'the repository root' : `${dir}/`);
    reasons.push(`runs in ${where(current.pipelineDir)} (was ${where(previous.pipelineDir)})`);
  }
  if (!sameList(previous.outs, current.outs) || !sameList(previous.metrics, current.metrics)) {
    reasons.push('declared outs or metrics changed');
  }
  if (canonicalJson(previous.plots ?? []) !== canonicalJson(current.plots ?? [])) {
    reasons.push('declared plots changed');
  }
  if (reasons.length > 0) return reasons;
  return [`same inputs as in run ${previousStage.runId}, whose result is not in the cache`];
}

/** How the program a command word starts changed, or null when it did not. */
function interpreterChange(
  word: string,
  before: Interpreter | null | undefined,
  after: Interpreter | null | undefined,
): string | null {
  const where = (found: Interpreter | null | undefined) =>
    found?.path ?? (isLaunchedName(word) ? 'it named no Python' : 'not found on PATH');
  if (before === undefined) return `now starts ${word} (${where(after)})`;
  if (after === undefined) return `no longer starts ${word}`;
  if (before?.path !== after?.path) return `${word} is now ${where(after)} (was ${where(before)})`;
  if (before?.digest !== after?.digest) return `${word} (${where(after)}) changed`;
  return null;
}

/** What differs between two read sets, file by file and folder by folder; null unless both exist. */
function readSetDifferences(before: ReadSet | null, after: ReadSet | null): string[] | null {
  if (!before || !after) return null;
  const differences: string[] = [];
  for (const file of union(Object.keys(before.files), Object.keys(after.files))) {
    if (before.files[file] !== after.files[file]) differences.push(`${file} changed`);
  }
  const [was, now] = [before.lookups ?? {}, after.lookups ?? {}];
  for (const path of union(Object.keys(was), Object.keys(now))) {
    if (was[path] !== now[path]) differences.push(`${path} changed`);
  }
  for (const [kind, a, b] of [
    ['entries', before.dirs, after.dirs],
    ['modules', before.moduleDirs, after.moduleDirs],
  ] as const) {
    for (const dir of union(Object.keys(a), Object.keys(b))) {
      if (a[dir] !== b[dir]) differences.push(`${kind} added to or removed from ${dir}/`);
    }
  }
  return differences;
}

function union(a: string[], b: string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}

function show(value: ParamValue | undefined): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

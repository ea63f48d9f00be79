import type { Problem } from '../../core/problem.js';
import { selectStages } from '../../core/pipeline/select-stages.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import type { StageSelection } from '../../schemas/stage-selection.js';

/** `fluksio run` and `fluksio status` words: stages to run, then `key=value` parameters. */
export interface StageArguments {
  /** Words without `=`: stage names (`train`, `train@small`). */
  stages: string[];
  /** Words with `=`: the parameter grammar's tokens (DESIGN §4). */
  params: string[];
}

/** The stages a run is asked for and how: `--downstream`, `--force`. */
export interface StageRequestOptions {
  downstream?: boolean;
  force?: boolean;
}

/** What runs: the selection (null: every stage) and the stages whose cache is skipped. */
export interface StageRequest {
  selection: StageSelection | null;
  /** `--force`: the named stages, or every stage when none is named; absent without it. */
  force?: ReadonlySet<string>;
}

/**
 * Splits a command's words: a stage name never holds `=`, a parameter always does (`lr=0.1`,
 * `featurize.max_features=400`, `custom.yaml:lr=0.1`).
 */
export function splitStageArguments(args: readonly string[]): StageArguments {
  return {
    stages: args.filter((arg) => !arg.includes('=')),
    params: args.filter((arg) => arg.includes('=')),
  };
}

/**
 * The stages to run for the named ones (and, with `downstream`, what depends on them),
 * checked against the pipeline: an unknown name is a problem naming it and the known
 * stages; `--downstream` without a stage is one too.
 */
export function stageRequest(
  pipeline: Pick<Pipeline, 'stages'>,
  named: readonly string[],
  options: StageRequestOptions,
): { request: StageRequest; problems: Problem[] } {
  const downstream = options.downstream ?? false;
  if (downstream && named.length === 0) {
    const message = '--downstream: name the stages to start from (fluksio run train --downstream)';
    return { request: { selection: null }, problems: [{ path: '', message }] };
  }
  const { selection, problems } = selectStages(pipeline, { named, downstream });
  if (!options.force) return { request: { selection }, problems };
  const force = new Set(named.length > 0 ? named : Object.keys(pipeline.stages));
  return { request: { selection, force }, problems };
}

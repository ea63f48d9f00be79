import type { ParamValue } from '../../schemas/key-inputs.js';
import type { ExperimentRun } from './experiment-run.js';

/** The columns of a run that are not its params or metrics. */
export const RUN_FIELDS = ['id', 'status', 'commit', 'when'] as const;

/** What a name in `--sort` or `--filter` stands for. */
export type ExperimentField =
  | { kind: 'run'; name: (typeof RUN_FIELDS)[number] }
  | { kind: 'param'; name: string }
  | { kind: 'metric'; name: string };

/**
 * The field `name` names among `runs`: a run's own field first (`id`, `status`, `commit`,
 * `when`), then a metric (the usual thing to sort on), then a param; null when no run has
 * it. A name that is both a metric and a param is the metric.
 */
export function experimentField(name: string, runs: readonly ExperimentRun[]): ExperimentField | null {
  const own = RUN_FIELDS.find((field) => field === name);
  if (own) return { kind: 'run', name: own };
  if (runs.some((run) => name in run.metrics)) return { kind: 'metric', name };
  if (runs.some((run) => name in run.params)) return { kind: 'param', name };
  return null;
}

/** A run's value of a field; undefined when the run has none. */
export function fieldValue(run: ExperimentRun, field: ExperimentField): ParamValue | undefined {
  switch (field.kind) {
    case 'metric':
      return run.metrics[field.name];
    case 'param':
      return run.params[field.name];
    case 'run':
      if (field.name === 'when') return run.createdAt.getTime();
      return run[field.name] ?? undefined;
  }
}

/** The names a run list offers, for the message about a name it does not have. */
export function knownNames(runs: readonly ExperimentRun[]): string {
  const params = [...new Set(runs.flatMap((run) => Object.keys(run.params)))];
  const metrics = [...new Set(runs.flatMap((run) => Object.keys(run.metrics)))];
  return [
    `params: ${params.join(', ') || 'none'}`,
    `metrics: ${metrics.join(', ') || 'none'}`,
    `or ${RUN_FIELDS.join(', ')}`,
  ].join('; ');
}

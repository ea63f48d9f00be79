import type { DvcPlotEntry, DvcPlotFlags, DvcTopLevelPlots } from '../../schemas/dvc/dvc-file.js';
import type { PlotSpec } from '../../schemas/plot-spec.js';
import { normalizePipelinePath, pathContains } from '../pipeline/pipeline-paths.js';

/** Templates that draw categories against each other (a confusion matrix): no series. */
const CATEGORICAL = new Set(['confusion', 'confusion_normalized']);
/** Images DVC shows as they are: kept as outs, never read. */
const IMAGE = /\.(?:png|jpe?g|gif|svg)$/i;

/** A stage's plot entry: its path as written, and each way it is drawn (none: DVC's defaults). */
export interface DvcStagePlot {
  path: string;
  flags: DvcPlotFlags[];
}

export function dvcStagePlot(entry: DvcPlotEntry): DvcStagePlot {
  if (typeof entry === 'string') return { path: entry, flags: [] };
  const [path, flags] = Object.entries(entry)[0] ?? ['', null];
  return { path, flags: flags === null ? [] : Array.isArray(flags) ? flags : [flags] };
}

/**
 * How a stage's plot file (at `path`, as the pipeline sees it: wdir folded in) is read as
 * series: one spec per way it is drawn, with DVC's `x`, `y` and `header`. A confusion
 * matrix's template, or an image, gives none.
 */
export function stagePlotSpecs(path: string, flags: readonly DvcPlotFlags[]): PlotSpec[] {
  if (IMAGE.test(path)) return [];
  return (flags.length > 0 ? flags : [{}])
    .filter((each) => !CATEGORICAL.has(each.template ?? ''))
    .map((each) => specOf(path, each.x, each.y, each.header));
}

export interface TopLevelPlotSpecs {
  /** Stage name → the specs of the top-level plots it writes. */
  byStage: Map<string, PlotSpec[]>;
  /** Plots no stage writes, named: fluksio reads series only from what a stage wrote. */
  notes: string[];
}

/**
 * The top-level `plots` of a `dvc.yaml`, given to the stages that write their files: a
 * plot whose file is (inside) an out of a stage is read after that stage, and one whose
 * folder holds outs is read from each of them. A plot id that is a path draws that file
 * or folder; any other id draws the files its `y` names (`{file.json: column}`), with `x`
 * a column or `{file.json: column}`.
 */
export function topLevelPlotSpecs(
  plots: DvcTopLevelPlots,
  outsOf: ReadonlyMap<string, readonly string[]>,
): TopLevelPlotSpecs {
  const byStage = new Map<string, PlotSpec[]>();
  const notes: string[] = [];
  const give = (stage: string, spec: PlotSpec) => byStage.set(stage, [...(byStage.get(stage) ?? []), spec]);
  for (const plot of plots) {
    const [id, definition] =
      typeof plot === 'string' ? [plot, null] : (Object.entries(plot)[0] ?? ['', null]);
    if (CATEGORICAL.has(definition?.template ?? '')) continue;
    const { x, y } = definition ?? {};
    const files: [string, string | string[] | undefined][] =
      y !== undefined && typeof y === 'object' && !Array.isArray(y) ? Object.entries(y) : [[id, y]];
    for (const [file, columns] of files) {
      if (IMAGE.test(file)) continue;
      const xColumn = typeof x === 'string' ? x : x?.[file];
      if (x !== undefined && xColumn === undefined) {
        notes.push(
          `plot ${id}: its x comes from another file than ${file}; each point's step is its row's index`,
        );
      }
      const path = normalizePipelinePath(file);
      const writers = [...outsOf].filter(([, outs]) => outs.some((out) => pathContains(out, path)));
      if (writers.length > 0) {
        for (const [stage] of writers) give(stage, specOf(path, xColumn, columns, undefined));
        continue;
      }
      let found = false;
      for (const [stage, outs] of outsOf) {
        for (const out of outs.filter((each) => pathContains(path, each) && !IMAGE.test(each))) {
          give(stage, specOf(out, xColumn, columns, undefined));
          found = true;
        }
      }
      if (!found) notes.push(`plot ${id}: no stage writes ${file}, so it is not read as series`);
    }
  }
  return { byStage, notes };
}

function specOf(
  path: string,
  x: string | undefined,
  y: string | readonly string[] | undefined,
  header: boolean | undefined,
): PlotSpec {
  return {
    path,
    ...(x === undefined ? {} : { x }),
    ...(y === undefined ? {} : { y: typeof y === 'string' ? [y] : [...y] }),
    ...(header === undefined ? {} : { header }),
  };
}

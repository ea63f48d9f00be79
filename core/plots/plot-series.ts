import { posix } from 'node:path';
import type { PlotSpec } from '../../schemas/plot-spec.js';
import { PlotTableError, type PlotCell, type PlotTable } from './parse-plot-table.js';

/** One series read from a plot file: its name and its points, in the file's order. */
export interface PlotSeries {
  name: string;
  points: { step: number; value: number }[];
}

/** Rows a plot file may have to be read as series (a loss curve or a ROC curve has far fewer). */
export const MAX_PLOT_ROWS = 100_000;
/** A series name is a key of the stored series, as a `::metric` name is. */
const MAX_SERIES_NAME = 200;

/**
 * The name of a plot file's series of `column`: the file's path without its extension,
 * then `/column` (`eval/plots/roc/tpr` for `tpr` of `eval/plots/roc.json`), or the path
 * alone when the column is the file's own name, as dvclive writes them
 * (`dvclive/plots/metrics/train/loss` for `loss` of `…/train/loss.tsv`).
 */
export function plotSeriesName(path: string, column: string): string {
  const base = posix.normalize(path).replace(/\.[^./]*$/, '');
  return posix.basename(base) === column ? base : `${base}/${column}`;
}

/**
 * A plot file's table as series, as DVC draws it: one series per `y` column (by default
 * the last numeric column other than x), stepped by `x`. x is by default the `step`
 * column when there is one. When every row's x is a distinct whole number ≥ 0 those are
 * the steps; otherwise (a ROC curve's `fpr`) each point's step is its row's index and the
 * x column is a series of its own, so the pairs are kept. A gap in a y column is no point.
 * Throws a PlotTableError naming the column, and the row, that cannot be read.
 */
export function plotSeries(table: PlotTable, spec: PlotSpec, path: string): PlotSeries[] {
  const { columns, rows } = table;
  if (rows.length > MAX_PLOT_ROWS) {
    throw new PlotTableError(`has ${rows.length} rows; at most ${MAX_PLOT_ROWS} are read as series`);
  }
  const listed = (column: string, axis: 'x' | 'y') => {
    if (!columns.includes(column)) {
      throw new PlotTableError(
        `has no ${axis} column "${column}" (its columns: ${columns.length > 0 ? columns.join(', ') : 'none'})`,
      );
    }
    return column;
  };
  const x = spec.x !== undefined ? listed(spec.x, 'x') : columns.includes('step') ? 'step' : null;
  const numeric = (column: string) =>
    rows.some(({ cells }) => typeof cells.get(column) === 'number') &&
    rows.every(({ cells }) => typeof cells.get(column) !== 'string');
  let ys: string[];
  if (spec.y !== undefined) ys = spec.y.map((column) => listed(column, 'y'));
  else {
    const last = columns.filter((column) => column !== x && numeric(column)).at(-1);
    if (last === undefined) {
      throw new PlotTableError(
        rows.length === 0
          ? 'has no rows'
          : `has no numeric column to read as a series besides ${x ?? 'none'}`,
      );
    }
    ys = [last];
  }

  const xCells = x === null ? [] : rows.map(({ cells }) => cells.get(x) ?? null);
  const xSteps = x !== null && distinctWholeNumbers(xCells);
  const steps = xSteps ? (xCells as number[]) : rows.map((_, index) => index);
  const series = [...ys];
  if (x !== null && !xSteps && !ys.includes(x) && numeric(x)) series.unshift(x);

  return series.map((column) => {
    const name = plotSeriesName(path, column);
    if (name.length > MAX_SERIES_NAME) {
      throw new PlotTableError(`its series name "${name}" is longer than ${MAX_SERIES_NAME} characters`);
    }
    const points: PlotSeries['points'] = [];
    rows.forEach(({ at, cells }, index) => {
      const value = cells.get(column) ?? null;
      if (typeof value === 'string') {
        throw new PlotTableError(`${at}: ${column} is "${clip(value)}", not a number`);
      }
      if (value !== null) points.push({ step: steps[index]!, value });
    });
    return { name, points };
  });
}

function distinctWholeNumbers(cells: PlotCell[]): boolean {
  const seen = new Set<number>();
  for (const cell of cells) {
    if (typeof cell !== 'number' || !Number.isSafeInteger(cell) || cell < 0 || seen.has(cell)) return false;
    seen.add(cell);
  }
  return cells.length > 0;
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

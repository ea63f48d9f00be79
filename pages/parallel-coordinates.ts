/** One vertical axis: a param or the metric, with each run's value on it. */
export interface Axis {
  name: string;
  /** Numbers are placed on a linear (or log) scale; other values spread evenly in sorted order. */
  values: readonly (string | number | boolean | null)[];
}

/** A brushed range of an axis, as fractions of its height from the bottom (0) to the top (1). */
export type Brush = readonly [low: number, high: number];

/** How the plot is drawn beyond its axes. */
export interface ParallelOptions {
  /** The run drawn last and thicker (the best), or null. */
  highlight: number | null;
  /** Axes placed on a log scale (numeric, all values positive). */
  logAxes: ReadonlySet<string>;
  /** Axis name → brushed range: runs outside any are drawn faint. */
  brushes: ReadonlyMap<string, Brush>;
}

/** Where the plot's axes stand on a canvas of `width` × `height` CSS pixels. */
export function plotFrame(
  width: number,
  height: number,
  axisCount: number,
): { top: number; bottom: number; xOf: (axis: number) => number } {
  const top = 28;
  const bottom = height - 16;
  const left = 48;
  const right = width - 48;
  return {
    top,
    bottom,
    xOf: (axis) => (axisCount === 1 ? (left + right) / 2 : left + ((right - left) * axis) / (axisCount - 1)),
  };
}

/** Whether an axis's values are positive numbers spanning at least two orders of magnitude. */
export function spansDecades(values: Axis['values']): boolean {
  const numbers = values.filter((value): value is number => typeof value === 'number');
  if (numbers.length < 2 || numbers.length !== values.filter((value) => value !== null).length) return false;
  const min = Math.min(...numbers);
  return min > 0 && Math.max(...numbers) / min >= 100;
}

/** Each run's place (0…1, or null for a missing value) on each axis. */
export function placeRuns(axes: readonly Axis[], logAxes: ReadonlySet<string>): (number | null)[][] {
  return axes.map((axis) => {
    const scale = scaleOf(axis.values, logAxes.has(axis.name) && canLog(axis.values));
    return axis.values.map((value) => scale(value));
  });
}

/** The runs inside every brush. */
export function runsWithinBrushes(
  axes: readonly Axis[],
  places: readonly (number | null)[][],
  brushes: ReadonlyMap<string, Brush>,
): boolean[] {
  const runs = axes[0]?.values.length ?? 0;
  return Array.from({ length: runs }, (_, run) =>
    axes.every((axis, i) => {
      const brush = brushes.get(axis.name);
      if (!brush) return true;
      const place = places[i]![run];
      return place !== null && place !== undefined && place >= brush[0] - 1e-9 && place <= brush[1] + 1e-9;
    }),
  );
}

/**
 * Draws a parallel-coordinates plot on a canvas: one axis per param that varies and the
 * metric last; each run a polyline coloured by its metric value (low blue, high orange),
 * the highlighted run (the best) drawn last and thicker, runs outside a brush faint grey,
 * each brush a band on its axis, log axes marked `(log)`.
 */
export function drawParallelCoordinates(
  canvas: HTMLCanvasElement,
  axes: readonly Axis[],
  options: ParallelOptions,
): void {
  const ratio = window.devicePixelRatio || 1;
  const width = canvas.clientWidth || 720;
  const height = canvas.clientHeight || 300;
  canvas.width = width * ratio;
  canvas.height = height * ratio;
  const ctx = canvas.getContext('2d');
  if (!ctx || axes.length === 0) return;
  ctx.scale(ratio, ratio);
  ctx.clearRect(0, 0, width, height);
  const { top, bottom, xOf } = plotFrame(width, height, axes.length);
  const places = placeRuns(axes, options.logAxes);
  const within = runsWithinBrushes(axes, places, options.brushes);
  const runs = axes[0]!.values.length;
  const yOf = (place: number | null | undefined): number =>
    place === null || place === undefined ? bottom : bottom - (bottom - top) * place;

  ctx.lineWidth = 1;
  ctx.font = '12px system-ui, sans-serif';
  ctx.textAlign = 'center';
  axes.forEach((axis, i) => {
    ctx.strokeStyle = '#555';
    ctx.beginPath();
    ctx.moveTo(xOf(i), top);
    ctx.lineTo(xOf(i), bottom);
    ctx.stroke();
    ctx.fillStyle = '#222';
    const log = options.logAxes.has(axis.name) && canLog(axis.values);
    ctx.fillText(`${axis.name}${log ? ' (log)' : ''}`, xOf(i), top - 10);
    const brush = options.brushes.get(axis.name);
    if (brush) {
      ctx.fillStyle = 'rgba(0, 0, 0, 0.18)';
      ctx.fillRect(xOf(i) - 8, yOf(brush[1]), 16, yOf(brush[0]) - yOf(brush[1]));
    }
  });
  const metric = places[places.length - 1]!;
  const order = [...Array(runs).keys()].sort((a, b) => Number(within[a]) - Number(within[b]));
  if (options.highlight !== null && within[options.highlight]) {
    order.splice(order.indexOf(options.highlight), 1);
    order.push(options.highlight);
  }
  for (const run of order) {
    const best = run === options.highlight && within[run];
    ctx.strokeStyle = !within[run] ? '#d0d0d0' : best ? '#d00000' : colourOf(metric[run] ?? 0.5);
    ctx.lineWidth = best ? 3 : 1.5;
    ctx.beginPath();
    axes.forEach((_, i) => {
      const y = yOf(places[i]![run]);
      if (i === 0) ctx.moveTo(xOf(i), y);
      else ctx.lineTo(xOf(i), y);
    });
    ctx.stroke();
  }
}

function canLog(values: Axis['values']): boolean {
  const numbers = values.filter((value): value is number => typeof value === 'number');
  return (
    numbers.length > 0 &&
    numbers.length === values.filter((value) => value !== null).length &&
    Math.min(...numbers) > 0
  );
}

/** Maps a value to 0…1 on its axis, or null for a missing one. */
function scaleOf(values: Axis['values'], log: boolean): (value: Axis['values'][number]) => number | null {
  const numbers = values.filter(
    (value): value is number => typeof value === 'number' && Number.isFinite(value),
  );
  if (numbers.length === values.filter((value) => value !== null).length && numbers.length > 0) {
    const at = (value: number): number => (log ? Math.log10(value) : value);
    const min = at(Math.min(...numbers));
    const max = at(Math.max(...numbers));
    return (value) =>
      typeof value === 'number' ? (max === min ? 0.5 : (at(value) - min) / (max - min)) : null;
  }
  const distinct = [...new Set(values.filter((value) => value !== null).map(String))].sort();
  return (value) =>
    value === null
      ? null
      : distinct.length === 1
        ? 0.5
        : distinct.indexOf(String(value)) / (distinct.length - 1);
}

/** Blue (0) to orange (1). */
function colourOf(t: number): string {
  const from = [0, 114, 178];
  const to = [230, 159, 0];
  const mix = from.map((channel, i) => Math.round(channel + (to[i]! - channel) * t));
  return `rgb(${mix.join(',')})`;
}

/** One vertical axis: a param or the metric, with each run's value on it. */
export interface Axis {
  name: string;
  /** Numbers are placed on a linear scale; other values spread evenly in sorted order. */
  values: readonly (string | number | boolean | null)[];
}

/**
 * Draws a parallel-coordinates plot on a canvas: one axis per param that varies and the
 * metric last; each run a polyline coloured by its metric value (low blue, high orange),
 * `highlight` (the best run) drawn last and thicker.
 */
export function drawParallelCoordinates(
  canvas: HTMLCanvasElement,
  axes: readonly Axis[],
  highlight: number | null,
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
  const top = 28;
  const bottom = height - 16;
  const left = 48;
  const right = width - 48;
  const xOf = (axis: number): number =>
    axes.length === 1 ? (left + right) / 2 : left + ((right - left) * axis) / (axes.length - 1);
  const scales = axes.map((axis) => scaleOf(axis.values));
  const runs = axes[0]!.values.length;
  const metric = scales[scales.length - 1]!;

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
    ctx.fillText(axis.name, xOf(i), top - 10);
  });
  const order = [...Array(runs).keys()].filter((run) => run !== highlight);
  if (highlight !== null) order.push(highlight);
  for (const run of order) {
    const t = metric(axes[axes.length - 1]!.values[run] ?? null);
    ctx.strokeStyle = run === highlight ? '#d00000' : colourOf(t ?? 0.5);
    ctx.lineWidth = run === highlight ? 3 : 1.5;
    ctx.beginPath();
    axes.forEach((axis, i) => {
      const place = scales[i]!(axis.values[run] ?? null);
      const y = place === null ? bottom : bottom - (bottom - top) * place;
      if (i === 0) ctx.moveTo(xOf(i), y);
      else ctx.lineTo(xOf(i), y);
    });
    ctx.stroke();
  }
}

/** Maps a value to 0…1 on its axis, or null for a missing one. */
function scaleOf(values: Axis['values']): (value: Axis['values'][number]) => number | null {
  const numbers = values.filter(
    (value): value is number => typeof value === 'number' && Number.isFinite(value),
  );
  if (numbers.length === values.filter((value) => value !== null).length && numbers.length > 0) {
    const min = Math.min(...numbers);
    const max = Math.max(...numbers);
    return (value) => (typeof value === 'number' ? (max === min ? 0.5 : (value - min) / (max - min)) : null);
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

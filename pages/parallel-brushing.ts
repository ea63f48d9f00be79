import { plotFrame, type Brush } from './parallel-coordinates.js';

/** The parallel-coordinates plot's settings as kept in the page's address. */
export interface ParallelSettings {
  brushes: Map<string, Brush>;
  /** Axes on a log scale; null until chosen, when those spanning decades are. */
  logAxes: Set<string> | null;
}

/**
 * Reads `brush=lr:0.2:0.8,accuracy:0.5:1` (each axis's range as fractions of its height,
 * names URI-encoded) and `pclog=lr,wd` from a query. Ranges that are not two numbers in
 * 0…1 are ignored, as a hand-edited address should not break the page.
 */
export function readParallelSettings(query: URLSearchParams): ParallelSettings {
  const brushes = new Map<string, Brush>();
  for (const part of (query.get('brush') ?? '').split(',').filter(Boolean)) {
    const [name, low, high] = part.split(':');
    const range = [Number(low), Number(high)] as const;
    if (
      name &&
      range.every((value) => Number.isFinite(value) && value >= 0 && value <= 1) &&
      range[0] <= range[1]
    )
      brushes.set(decodeURIComponent(name), range);
  }
  const log = query.get('pclog');
  return {
    brushes,
    logAxes: log === null ? null : new Set(log.split(',').filter(Boolean).map(decodeURIComponent)),
  };
}

/** Writes the settings into `query` (readParallelSettings reads them back). */
export function writeParallelSettings(query: URLSearchParams, settings: ParallelSettings): void {
  const brushes = [...settings.brushes].map(
    ([name, [low, high]]) => `${encodeURIComponent(name)}:${low.toFixed(3)}:${high.toFixed(3)}`,
  );
  if (brushes.length > 0) query.set('brush', brushes.join(','));
  else query.delete('brush');
  if (settings.logAxes === null) query.delete('pclog');
  else query.set('pclog', [...settings.logAxes].map(encodeURIComponent).join(','));
}

/** How far an arrow key moves or widens a brush (PageUp/PageDown: four times as far), as a fraction of the axis. */
const KEY_STEP = 0.05;
/** The brush the first arrow key makes on an axis without one: its middle fifth. */
const FIRST_BRUSH: Brush = [0.4, 0.6];

/**
 * A brush after a key pressed on its axis: ↑/↓ (PageUp/PageDown further) move it,
 * Shift+↑ widens it upwards and Shift+↓ downwards, Escape clears it; the first arrow on
 * an axis without a brush makes FIRST_BRUSH. Undefined for a key that does nothing here
 * (Escape with no brush included, so it goes on to whatever else listens).
 */
export function brushAfterKey(range: Brush | null, key: string, shift: boolean): Brush | null | undefined {
  if (key === 'Escape') return range === null ? undefined : null;
  const up = key === 'ArrowUp' || key === 'PageUp';
  if (!up && key !== 'ArrowDown' && key !== 'PageDown') return undefined;
  if (range === null) return FIRST_BRUSH;
  const step = key.startsWith('Page') ? KEY_STEP * 4 : KEY_STEP;
  const [low, high] = range;
  // Rounded to the URL's precision, so that steps add up to what the address keeps.
  const round = (value: number) => Math.round(value * 1000) / 1000;
  if (shift) return up ? [low, round(Math.min(1, high + step))] : [round(Math.max(0, low - step)), high];
  const delta = up ? Math.min(step, 1 - high) : -Math.min(step, low);
  return [round(low + delta), round(high + delta)];
}

/**
 * Lets a pointer brush the plot's axes: a vertical drag on (or near) an axis selects the
 * range it covers, a click on an axis without a drag clears its range. `onBrush` gets
 * the axis and its range (null when cleared) at each move and at the end.
 */
export function attachBrushing(
  canvas: HTMLCanvasElement,
  axisNames: () => readonly string[],
  onBrush: (axis: string, range: Brush | null, done: boolean) => void,
): void {
  let dragging: { axis: string; from: number; moved: boolean } | null = null;
  const fraction = (event: PointerEvent): number => {
    const box = canvas.getBoundingClientRect();
    const { top, bottom } = plotFrame(box.width, box.height, axisNames().length);
    const y = event.clientY - box.top;
    return Math.min(1, Math.max(0, (bottom - y) / (bottom - top)));
  };
  canvas.addEventListener('pointerdown', (event) => {
    const box = canvas.getBoundingClientRect();
    const names = axisNames();
    const { xOf } = plotFrame(box.width, box.height, names.length);
    const x = event.clientX - box.left;
    const nearest = names.findIndex((_, i) => Math.abs(xOf(i) - x) <= 16);
    if (nearest === -1) return;
    dragging = { axis: names[nearest]!, from: fraction(event), moved: false };
    canvas.setPointerCapture(event.pointerId);
    event.preventDefault();
  });
  canvas.addEventListener('pointermove', (event) => {
    if (!dragging) return;
    const to = fraction(event);
    if (Math.abs(to - dragging.from) < 0.01 && !dragging.moved) return;
    dragging.moved = true;
    onBrush(dragging.axis, [Math.min(dragging.from, to), Math.max(dragging.from, to)], false);
  });
  const end = (event: PointerEvent): void => {
    if (!dragging) return;
    const { axis, from, moved } = dragging;
    dragging = null;
    const to = fraction(event);
    onBrush(axis, moved ? [Math.min(from, to), Math.max(from, to)] : null, true);
  };
  canvas.addEventListener('pointerup', end);
  canvas.addEventListener('pointercancel', end);
}

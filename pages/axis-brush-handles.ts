import { h } from './dom.js';
import { brushAfterKey } from './parallel-brushing.js';
import { plotFrame, type Brush } from './parallel-coordinates.js';

/** The keys, as the handles' description says them. */
export const BRUSH_KEYS_HELP =
  'On a focused axis: ↑ and ↓ move its brush, Shift with ↑ or ↓ widens it, Escape clears it.';

/** The focusable axes laid over the plot's canvas. */
export interface AxisBrushHandles {
  /** To put after the canvas, in a box positioned relative to it. */
  element: HTMLElement;
  /** Places a handle on each axis drawn on `canvas`, keeping those (and the focus) of axes still shown. */
  update(canvas: HTMLCanvasElement, axisNames: readonly string[]): void;
}

/**
 * The keyboard's way to brush the parallel-coordinates plot: each axis a focusable
 * vertical slider laid over it, in tab order, whose arrow keys move and widen the axis's
 * brush and whose Escape clears it (brushAfterKey); `onBrush` is told as a pointer's
 * brushing tells it. The handles take no pointer events: dragging on the canvas still
 * brushes. A handle reads its brush as a range of the axis for assistive technology.
 */
export function axisBrushHandles(
  brushOf: (axis: string) => Brush | null,
  onBrush: (axis: string, range: Brush | null, done: boolean) => void,
  describedBy: string,
): AxisBrushHandles {
  const element = h('div', { class: 'pc-handles' });
  const handles = new Map<string, HTMLElement>();
  const describe = (handle: HTMLElement, axis: string): void => {
    const brush = brushOf(axis);
    const percent = (value: number) => Math.round(value * 100);
    handle.setAttribute('aria-valuenow', String(brush ? percent(brush[1]) : 0));
    handle.setAttribute(
      'aria-valuetext',
      brush ? `brushed from ${percent(brush[0])}% to ${percent(brush[1])}% of the axis` : 'no brush',
    );
    handle.dataset.brush = brush ? `${brush[0]}:${brush[1]}` : '';
  };
  const make = (axis: string): HTMLElement => {
    const handle = h('div', {
      class: 'pc-handle',
      tabindex: 0,
      role: 'slider',
      'aria-orientation': 'vertical',
      'aria-label': `Brush on ${axis}`,
      'aria-describedby': describedBy,
      'aria-valuemin': 0,
      'aria-valuemax': 100,
      'data-axis': axis,
      onkeydown: (event: Event) => {
        const { key, shiftKey } = event as KeyboardEvent;
        const next = brushAfterKey(brushOf(axis), key, shiftKey);
        if (next === undefined) return;
        event.preventDefault();
        onBrush(axis, next, true);
        describe(handle, axis);
      },
    });
    return handle;
  };
  return {
    element,
    update(canvas, axisNames) {
      const { top, bottom, xOf } = plotFrame(canvas.clientWidth, canvas.clientHeight, axisNames.length);
      const left = canvas.offsetLeft + canvas.clientLeft;
      const shown = axisNames.map((axis, i) => {
        const handle = handles.get(axis) ?? make(axis);
        handles.set(axis, handle);
        Object.assign(handle.style, {
          left: `${left + xOf(i) - 12}px`,
          top: `${canvas.offsetTop + canvas.clientTop + top}px`,
          height: `${bottom - top}px`,
        });
        describe(handle, axis);
        return handle;
      });
      for (const [axis, handle] of handles) if (!shown.includes(handle)) handles.delete(axis);
      // Only when the axes changed: replacing a focused handle would drop the focus.
      if (
        shown.some((handle, i) => element.children[i] !== handle) ||
        element.children.length !== shown.length
      )
        element.replaceChildren(...shown);
    },
  };
}

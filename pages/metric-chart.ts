import uPlot from 'uplot';
import type { SeriesRangeData } from '../schemas/page-data.js';
import { h } from './dom.js';
import { smooth } from './smooth.js';
import { messageOf } from '../core/text/message-of.js';

/** One line of a chart: a run's series (or its baseline's, dashed). */
export interface Curve {
  label: string;
  points: readonly { step: number; value: number; at?: number }[];
  /** How many points the series has, when `points` were cut down to the chart's width. */
  total?: number | undefined;
  color: string;
  dashed?: boolean;
}

/** How every chart of a page is drawn; the page's controls change it. */
export interface ChartSettings {
  /** `wall`: seconds since each curve's first point, from the times the stage printed them. */
  axis: 'step' | 'wall';
  logScale: boolean;
  /** 0 (none) … 0.99 */
  smoothing: number;
}

/** Two charts side by side on a laptop's screen: also the pixels the server cuts series down to. */
export const CHART_WIDTH = 560;

/** Colours told apart by most readers, colour-blind ones included (Okabe–Ito). */
export const PALETTE = [
  '#0072b2',
  '#d55e00',
  '#009e73',
  '#cc79a7',
  '#e69f00',
  '#56b4e9',
  '#000000',
  '#f0e442',
];

/**
 * One metric's curves (uPlot) on a step axis or a wall-time one (seconds since each
 * curve's first point, so a baseline run on another day overlays; points without a time
 * are left out there): every series given, the baseline's dashed, log scale and
 * smoothing from the page's settings. `update` redraws with new points (a
 * live run's curves grow) without rebuilding the chart unless the set of curves changed.
 * The points given may be cut down to the chart's width (`Curve.total`); with `zoom`,
 * dragging across the step axis asks for that range at full resolution, and a double
 * click goes back to the whole run.
 */
export class MetricChart {
  readonly element: HTMLElement;
  private plot: uPlot | null = null;
  private shape = '';
  private curves: Curve[] = [];
  /** The range a drag zoomed into, and its curves at full resolution; null for the whole run. */
  private zoomed: { from: number; to: number; curves: Curve[] } | null = null;
  private readonly body: HTMLElement;

  constructor(
    readonly metric: string,
    private settings: ChartSettings,
    private readonly zoom?: (range: { from: number; to: number }) => Promise<SeriesRangeData>,
  ) {
    this.body = h('div', { class: 'chart-body' });
    this.element = h(
      'figure',
      { class: 'chart', 'data-metric': metric },
      h('figcaption', {}, metric),
      this.body,
    );
    this.body.addEventListener('dblclick', () => {
      if (!this.zoomed) return;
      this.zoomed = null;
      delete this.element.dataset.zoomed;
      this.draw();
    });
  }

  update(curves: Curve[]): void {
    this.curves = curves;
    // What the run has, readable by tests and assistive tools without reading the canvas.
    this.element.dataset.points = String(this.pointCount);
    this.element.dataset.curves = String(curves.length);
    // A zoomed chart keeps its range; the whole run is drawn again once it zooms out.
    if (!this.zoomed) this.draw();
  }

  configure(settings: ChartSettings): void {
    this.settings = settings;
    this.shape = '';
    this.draw();
  }

  /** Points the curves have in total (cut down or not), for tests and the bench. */
  get pointCount(): number {
    return this.curves.reduce((sum, curve) => sum + (curve.total ?? curve.points.length), 0);
  }

  /** Asks for a range of steps at full resolution and draws it. */
  private async zoomTo(from: number, to: number): Promise<void> {
    if (!this.zoom || !(to > from)) return;
    const range = await this.zoom({ from, to });
    const curves = this.curves.map((curve, i) => {
      const series = i === 0 && !curve.dashed ? range.series : curve.dashed ? range.baseline : null;
      return { ...curve, points: series?.points ?? [], total: series?.total };
    });
    this.zoomed = { from, to, curves };
    this.element.dataset.zoomed = `${from}-${to}`;
    this.draw();
  }

  private draw(): void {
    const wall = this.settings.axis === 'wall';
    const drawn = this.zoomed?.curves ?? this.curves;
    this.element.dataset.drawn = String(drawn.reduce((sum, curve) => sum + curve.points.length, 0));
    const placed = drawn.map((curve) => {
      if (!wall) return curve.points.map((point) => ({ x: point.step, value: point.value }));
      const timed = curve.points.filter((point) => point.at !== undefined);
      const start = Math.min(...timed.map((point) => point.at!));
      return timed.map((point) => ({ x: (point.at! - start) / 1000, value: point.value }));
    });
    const shown = (value: number): number | null => (this.settings.logScale && value <= 0 ? null : value);
    let xs: number[];
    let columns: (number | null)[][];
    const only = placed.length === 1 ? placed[0]! : null;
    if (only && only.every((point, i) => i === 0 || point.x > only[i - 1]!.x)) {
      // One curve with its x ascending (a run's series is sorted by step): no merging.
      xs = only.map((point) => point.x);
      columns = [
        smooth(
          only.map((point) => shown(point.value)),
          this.settings.smoothing,
        ),
      ];
    } else {
      xs = [...new Set(placed.flatMap((points) => points.map((point) => point.x)))].sort((a, b) => a - b);
      const index = new Map(xs.map((x, i) => [x, i]));
      columns = placed.map((points) => {
        const column: (number | null)[] = new Array(xs.length).fill(null);
        for (const { x, value } of points) column[index.get(x)!] = shown(value);
        return smooth(column, this.settings.smoothing);
      });
    }
    const data = [xs, ...columns] as uPlot.AlignedData;
    // The axis drawn and how far it reaches, for tests (uPlot draws its ticks on the canvas).
    this.element.dataset.axis = this.settings.axis;
    this.element.dataset.xMax = String(xs.at(-1) ?? '');
    const shape = JSON.stringify([
      drawn.map((curve) => [curve.label, curve.color, curve.dashed]),
      this.settings,
    ]);
    if (this.plot && shape === this.shape) {
      this.plot.setData(data);
      return;
    }
    // On the step axis a drag asks the server for the range; on wall time uPlot zooms the points held.
    const fetchRange = !wall && this.zoom !== undefined;
    this.plot?.destroy();
    this.shape = shape;
    this.plot = new uPlot(
      {
        width: CHART_WIDTH,
        height: 260,
        scales: { x: { time: false }, y: this.settings.logScale ? { distr: 3 } : {} },
        cursor: { drag: { x: true, y: false, setScale: !fetchRange } },
        hooks: {
          setSelect: [
            (plot: uPlot) => {
              if (!fetchRange || plot.select.width <= 0) return;
              const from = Math.ceil(plot.posToVal(plot.select.left, 'x'));
              const to = Math.floor(plot.posToVal(plot.select.left + plot.select.width, 'x'));
              plot.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
              this.zoomTo(from, to).catch((error: unknown) => {
                this.element.dataset.zoomError = messageOf(error);
              });
            },
          ],
        },
        axes: [{ label: wall ? 'seconds since the first point' : 'step' }, {}],
        series: [
          { label: wall ? 'seconds' : 'step' },
          ...drawn.map((curve) => ({
            label: curve.label,
            stroke: curve.color,
            width: 1.5,
            spanGaps: true,
            ...(curve.dashed ? { dash: [6, 4] } : {}),
          })),
        ],
      },
      data,
      this.body,
    );
  }
}

/** The controls every page with charts has: the x axis, log scale and smoothing, kept in the URL. */
export function chartControls(onChange: (settings: ChartSettings) => void): {
  element: HTMLElement;
  settings: ChartSettings;
} {
  const query = new URLSearchParams(location.search);
  const settings: ChartSettings = {
    axis: query.get('x') === 'wall' ? 'wall' : 'step',
    logScale: query.get('log') === '1',
    smoothing: Math.min(0.99, Math.max(0, Number(query.get('smooth') ?? 0) || 0)),
  };
  const changed = (): void => {
    const next = new URLSearchParams(location.search);
    if (settings.axis === 'wall') next.set('x', 'wall');
    else next.delete('x');
    if (settings.logScale) next.set('log', '1');
    else next.delete('log');
    if (settings.smoothing > 0) next.set('smooth', String(settings.smoothing));
    else next.delete('smooth');
    history.replaceState(null, '', `${location.pathname}?${next.toString()}${location.hash}`);
    onChange(settings);
  };
  const log = h('input', {
    type: 'checkbox',
    id: 'log-scale',
    ...(settings.logScale ? { checked: true } : {}),
    onchange: (event: Event) => {
      settings.logScale = (event.target as HTMLInputElement).checked;
      changed();
    },
  });
  const smoothing = h('input', {
    type: 'range',
    id: 'smoothing',
    min: 0,
    max: 0.99,
    step: 0.01,
    value: settings.smoothing,
    onchange: (event: Event) => {
      settings.smoothing = Number((event.target as HTMLInputElement).value);
      changed();
    },
  });
  const axis = h(
    'select',
    {
      id: 'x-axis',
      onchange: (event: Event) => {
        settings.axis = (event.target as HTMLSelectElement).value === 'wall' ? 'wall' : 'step';
        changed();
      },
    },
    h('option', { value: 'step', ...(settings.axis === 'step' ? { selected: true } : {}) }, 'step'),
    h('option', { value: 'wall', ...(settings.axis === 'wall' ? { selected: true } : {}) }, 'wall time'),
  );
  const element = h(
    'div',
    { class: 'chart-controls' },
    h('label', { for: 'x-axis' }, 'x axis ', axis),
    h('label', { for: 'log-scale' }, log, ' log scale'),
    h('label', { for: 'smoothing' }, 'smoothing ', smoothing),
  );
  return { element, settings };
}

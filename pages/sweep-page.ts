import type { RunsPageData } from '../schemas/page-data.js';
import { h } from './dom.js';
import { formatNumber, short } from './format.js';
import { fetchJson, pageUrl } from './page-link.js';
import { axisBrushHandles, BRUSH_KEYS_HELP } from './axis-brush-handles.js';
import { attachBrushing, readParallelSettings, writeParallelSettings } from './parallel-brushing.js';
import {
  drawParallelCoordinates,
  placeRuns,
  runsWithinBrushes,
  spansDecades,
  type Axis,
  type Brush,
} from './parallel-coordinates.js';
import { bestRun, metricNames, paramsByVariation } from './runs-table.js';

/**
 * A sweep's page: its runs in a table sortable by any column (by the first goal metric,
 * best first, to begin with), the best run by each metric's goal marked, the runs chosen
 * for a comparison, and a parallel-coordinates plot of the params that vary against a
 * metric. Dragging along an axis brushes it: the table keeps only the runs within every
 * brush. Params spanning orders of magnitude start on a log axis. The sort, the plotted
 * metric, the brushes and the log axes are kept in the URL, and restored from it.
 */
export async function sweepPage(main: HTMLElement, groupId: string): Promise<void> {
  const data = await fetchJson<RunsPageData>(`/pages/api/groups/${encodeURIComponent(groupId)}`);
  const { varying } = paramsByVariation(data.runs);
  const metrics = metricNames(data);
  const query = new URLSearchParams(location.search);
  const firstGoal = metrics.find((name) => data.goals[name]) ?? metrics[0] ?? null;
  let sortKey = query.get('sort') ?? (firstGoal ? `metric:${firstGoal}` : 'index');
  let descending = query.has('desc')
    ? query.get('desc') === '1'
    : firstGoal
      ? data.goals[firstGoal]?.goal === 'max'
      : false;
  let plotted = query.get('metric') ?? firstGoal;
  const parallel = readParallelSettings(query);
  const axes = (): Axis[] =>
    plotted
      ? [
          ...varying.map((name) => ({ name, values: data.runs.map((run) => run.params[name] ?? null) })),
          { name: plotted, values: data.runs.map((run) => run.metrics[plotted!] ?? null) },
        ]
      : [];
  const logAxes = (): Set<string> =>
    parallel.logAxes ??
    new Set(
      axes()
        .filter((axis) => spansDecades(axis.values))
        .map((axis) => axis.name),
    );
  const within = (): boolean[] => {
    const shown = axes();
    if (shown.length === 0) return data.runs.map(() => true);
    return runsWithinBrushes(shown, placeRuns(shown, logAxes()), parallel.brushes);
  };
  const brushStatus = h('p', { id: 'brush-status', role: 'status' });
  const clearBrushes = h(
    'button',
    {
      type: 'button',
      id: 'clear-brushes',
      onclick: () => {
        parallel.brushes.clear();
        keep();
        render();
        plot();
      },
    },
    'Clear brushes',
  );
  const logChoices = h('fieldset', { class: 'pc-log' });
  const chosen = new Set<string>();
  const best = new Map(metrics.map((metric) => [metric, bestRun(data, metric)]));

  const table = h('table', { class: 'runs', id: 'sweep-table' });
  const compare = h('a', { class: 'button', id: 'compare-link', href: '#' }, 'Compare chosen runs');
  const canvas = h('canvas', {
    id: 'parallel',
    width: 720,
    height: 300,
    role: 'img',
    'aria-label': 'Parallel coordinates of the params that vary against the metric',
  });
  const metricSelect = h(
    'select',
    {
      id: 'plot-metric',
      onchange: (event: Event) => {
        if (plotted) parallel.brushes.delete(plotted);
        plotted = (event.target as HTMLSelectElement).value;
        keep();
        render();
        plot();
      },
    },
    ...metrics.map((name) =>
      h('option', { value: name, ...(name === plotted ? { selected: true } : {}) }, name),
    ),
  );

  const keep = (): void => {
    const next = new URLSearchParams(location.search);
    next.set('sort', sortKey);
    next.set('desc', descending ? '1' : '0');
    if (plotted) next.set('metric', plotted);
    writeParallelSettings(next, parallel);
    history.replaceState(null, '', `${location.pathname}?${next.toString()}`);
  };
  const valueOf = (i: number, key: string): string | number | boolean | null => {
    const run = data.runs[i]!;
    if (key === 'index') return run.groupIndex ?? i;
    if (key === 'status') return run.status;
    if (key.startsWith('param:')) return run.params[key.slice(6)] ?? null;
    return run.metrics[key.slice(7)] ?? null;
  };
  const render = (): void => {
    const kept = within();
    const keptCount = kept.filter(Boolean).length;
    brushStatus.textContent =
      parallel.brushes.size === 0
        ? 'Drag along an axis of the plot, or focus one with Tab and press ↑ or ↓, to keep only the runs in that range.'
        : `${keptCount} of ${data.runs.length} runs within the brushes`;
    clearBrushes.hidden = parallel.brushes.size === 0;
    const order = [...data.runs.keys()].sort((a, b) => {
      const x = valueOf(a, sortKey);
      const y = valueOf(b, sortKey);
      if (x === null || y === null) return x === null ? (y === null ? 0 : 1) : -1;
      const compared =
        typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return descending ? -compared : compared;
    });
    const header = (key: string, label: string): HTMLElement =>
      h(
        'th',
        { scope: 'col', 'aria-sort': sortKey === key ? (descending ? 'descending' : 'ascending') : 'none' },
        h(
          'button',
          {
            type: 'button',
            onclick: () => {
              // A new metric column sorts best first, by its goal; a second click reverses.
              descending =
                sortKey === key
                  ? !descending
                  : key.startsWith('metric:') && data.goals[key.slice(7)]?.goal === 'max';
              sortKey = key;
              keep();
              render();
            },
          },
          label,
          sortKey === key ? (descending ? ' ▼' : ' ▲') : '',
        ),
      );
    table.replaceChildren(
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'compare'),
          header('index', '#'),
          h('th', { scope: 'col' }, 'run'),
          header('status', 'status'),
          ...varying.map((name) => header(`param:${name}`, name)),
          ...metrics.map((name) =>
            header(`metric:${name}`, `${name}${data.goals[name] ? ` (${data.goals[name]!.goal})` : ''}`),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        order.map((i) => {
          const run = data.runs[i]!;
          const bestOf = metrics.filter((metric) => best.get(metric) === i);
          return h(
            'tr',
            {
              'data-run': run.id,
              ...(kept[i] ? {} : { hidden: true }),
              ...(bestOf.length > 0 ? { 'data-best': bestOf.join(' '), class: 'best' } : {}),
            },
            h(
              'td',
              {},
              h('input', {
                type: 'checkbox',
                'aria-label': `Compare run ${run.id}`,
                ...(chosen.has(run.id) ? { checked: true } : {}),
                onchange: (event: Event) => {
                  if ((event.target as HTMLInputElement).checked) chosen.add(run.id);
                  else chosen.delete(run.id);
                  updateCompare();
                },
              }),
            ),
            h('td', { class: 'num' }, String(run.groupIndex ?? i)),
            h('td', {}, h('a', { href: pageUrl(`/runs/${encodeURIComponent(run.id)}`) }, short(run.id))),
            h('td', {}, h('span', { class: `badge ${run.status}` }, run.status)),
            ...varying.map((name) => h('td', { class: 'num' }, String(run.params[name] ?? '—'))),
            ...metrics.map((name) =>
              h(
                'td',
                { class: `num${best.get(name) === i ? ' best-cell' : ''}` },
                formatNumber(run.metrics[name]),
                best.get(name) === i ? h('span', { class: 'star', title: `best ${name}` }, ' ★ best') : null,
              ),
            ),
          );
        }),
      ),
    );
  };
  const updateCompare = (): void => {
    const ids = [...chosen];
    compare.setAttribute('href', ids.length > 0 ? pageUrl('/compare', { runs: ids.join(',') }) : '#');
    compare.setAttribute('aria-disabled', ids.length > 1 ? 'false' : 'true');
  };
  // A pointer's drag and a handle's keys brush alike; the URL keeps the brush once done.
  const brushAxis = (axis: string, range: Brush | null, done: boolean): void => {
    if (range) parallel.brushes.set(axis, range);
    else parallel.brushes.delete(axis);
    plot();
    if (done) {
      keep();
      render();
    }
  };
  const handles = axisBrushHandles((axis) => parallel.brushes.get(axis) ?? null, brushAxis, 'brush-keys');
  const plot = (): void => {
    if (!plotted) return;
    const shown = axes();
    const log = logAxes();
    drawParallelCoordinates(canvas, shown, {
      highlight: best.get(plotted) ?? null,
      logAxes: log,
      brushes: parallel.brushes,
    });
    // What is drawn, for tests and assistive tools that cannot read the canvas.
    canvas.dataset.axes = shown.map((axis) => axis.name).join(',');
    canvas.dataset.logAxes = [...log].join(',');
    handles.update(
      canvas,
      shown.map((axis) => axis.name),
    );
    logChoices.replaceChildren(
      h('legend', {}, 'log scale'),
      ...shown
        .filter((axis) => axis.values.some((value) => typeof value === 'number'))
        .map((axis) =>
          h(
            'label',
            {},
            h('input', {
              type: 'checkbox',
              'data-axis': axis.name,
              ...(log.has(axis.name) ? { checked: true } : {}),
              onchange: (event: Event) => {
                const chosen = new Set(log);
                if ((event.target as HTMLInputElement).checked) chosen.add(axis.name);
                else chosen.delete(axis.name);
                parallel.logAxes = chosen;
                // A brush is a place on the axis: on a new scale it would select other runs.
                parallel.brushes.delete(axis.name);
                keep();
                render();
                plot();
              },
            }),
            ` ${axis.name}`,
          ),
        ),
    );
  };
  attachBrushing(canvas, () => axes().map((axis) => axis.name), brushAxis);

  main.replaceChildren(
    h('h1', {}, `Sweep ${groupId}`),
    h(
      'p',
      {},
      `${data.runs.length} runs of ${data.repository}; params that vary: ${varying.join(', ') || 'none'}.`,
    ),
    table,
    h('p', {}, compare),
    h(
      'section',
      { 'aria-labelledby': 'pc-title' },
      h('h2', { id: 'pc-title' }, 'Params against a metric'),
      h('label', { for: 'plot-metric' }, 'metric '),
      metricSelect,
      logChoices,
      h('div', { class: 'pc-box' }, canvas, handles.element),
      h('p', { id: 'brush-keys' }, BRUSH_KEYS_HELP),
      brushStatus,
      clearBrushes,
    ),
  );
  render();
  updateCompare();
  plot();
  main.dataset.final = 'true';
}

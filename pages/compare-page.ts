import type { RunsPageData } from '../schemas/page-data.js';
import { h } from './dom.js';
import { formatNumber, short } from './format.js';
import { chartControls, MetricChart, PALETTE } from './metric-chart.js';
import { fetchJson, pageUrl } from './page-link.js';
import { metricNames, paramsByVariation } from './runs-table.js';

/**
 * N runs side by side: what differs first (params that vary, then metrics), the params
 * they share folded away, and each metric's curves of every run overlaid.
 */
export async function comparePage(main: HTMLElement, runIds: string): Promise<void> {
  const data = await fetchJson<RunsPageData>(`/pages/api/compare?runs=${encodeURIComponent(runIds)}`);
  const { varying, same } = paramsByVariation(data.runs);
  const metrics = metricNames(data);
  const charts: MetricChart[] = [];
  const controls = chartControls((settings) => charts.forEach((chart) => chart.configure(settings)));
  const columns = data.runs.map((run, i) =>
    h(
      'th',
      { scope: 'col', style: `border-top: 4px solid ${PALETTE[i % PALETTE.length]}` },
      h('a', { href: pageUrl(`/runs/${encodeURIComponent(run.id)}`) }, short(run.id)),
    ),
  );
  const row = (label: string, cells: string[], differs: boolean): HTMLElement =>
    h(
      'tr',
      { class: differs ? 'differs' : 'same' },
      h('th', { scope: 'row' }, label),
      ...cells.map((cell) => h('td', { class: 'num' }, cell)),
    );
  const metricRows = metrics.map((name) => {
    const cells = data.runs.map((run) => formatNumber(run.metrics[name]));
    return { name, cells, differs: new Set(cells).size > 1 };
  });
  const chartBox = h('div', { class: 'charts' });
  main.replaceChildren(
    h('h1', {}, `Compare ${data.runs.length} runs`),
    h(
      'table',
      { class: 'compare', id: 'compare-table' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, ''), ...columns)),
      h(
        'tbody',
        {},
        h('tr', {}, h('th', { scope: 'rowgroup', colspan: data.runs.length + 1 }, 'Params that differ')),
        ...varying.map((name) =>
          row(
            name,
            data.runs.map((run) => String(run.params[name] ?? '—')),
            true,
          ),
        ),
        h('tr', {}, h('th', { scope: 'rowgroup', colspan: data.runs.length + 1 }, 'Metrics')),
        ...[...metricRows.filter((m) => m.differs), ...metricRows.filter((m) => !m.differs)].map((m) =>
          row(m.name, m.cells, m.differs),
        ),
        h('tr', {}, h('th', { scope: 'rowgroup', colspan: data.runs.length + 1 }, 'Params all runs share')),
        ...same.map((name) =>
          row(
            name,
            data.runs.map((run) => String(run.params[name] ?? '—')),
            false,
          ),
        ),
      ),
    ),
    h(
      'section',
      { 'aria-labelledby': 'curves-title' },
      h('h2', { id: 'curves-title' }, 'Metric curves'),
      controls.element,
      chartBox,
    ),
  );
  const seriesNames = [...new Set(data.runs.flatMap((run) => Object.keys(run.series)))];
  for (const name of seriesNames) {
    const chart = new MetricChart(name, controls.settings);
    charts.push(chart);
    chartBox.append(chart.element);
    chart.update(
      data.runs.flatMap((run, i) => {
        const series = run.series[name];
        return series
          ? [{ label: short(run.id), points: series.points, color: PALETTE[i % PALETTE.length]! }]
          : [];
      }),
    );
  }
  main.dataset.final = 'true';
}

import type { RunPageData, SeriesRangeData } from '../schemas/page-data.js';
import { describeJobPending } from '../core/text/describe-job-pending.js';
import { h } from './dom.js';
import { formatDuration, formatNumber, formatParams, short } from './format.js';
import { LogView } from './log-view.js';
import { CHART_WIDTH, chartControls, MetricChart, PALETTE, type Curve } from './metric-chart.js';
import { outputsTable } from './outputs-table.js';
import { fetchJson, pageUrl } from './page-link.js';

/**
 * The run page: stamp, stages, failure tracebacks, the metric diff against the baseline,
 * metric curves and every stage's log. The first request asks for the series cut down to
 * the charts' width (a zoomed chart asks for its range at full resolution); while the run
 * runs, its state and new points are pushed (`/live`, server-sent events resumed after a
 * reconnect) and the logs stream; when it ends, the page shows the final state without a
 * reload.
 */
export async function runPage(main: HTMLElement, runId: string): Promise<void> {
  const summary = h('div', { class: 'run-summary' });
  const charts = new Map<string, MetricChart>();
  const chartBox = h('div', { class: 'charts' });
  const controls = chartControls((settings) => {
    for (const chart of charts.values()) chart.configure(settings);
  });
  const logs = new Map<string, LogView>();
  const logBox = h('div', { class: 'logs' });
  main.replaceChildren(
    summary,
    h(
      'section',
      { 'aria-labelledby': 'curves-title' },
      h('h2', { id: 'curves-title' }, 'Metric curves'),
      controls.element,
      chartBox,
    ),
    h('section', { 'aria-labelledby': 'logs-title' }, h('h2', { id: 'logs-title' }, 'Logs'), logBox),
  );

  const path = `/pages/api/runs/${encodeURIComponent(runId)}`;
  const zoom = (name: string, range: { from: number; to: number }): Promise<SeriesRangeData> =>
    fetchJson<SeriesRangeData>(
      `${path}/series?${new URLSearchParams({
        name,
        from: String(range.from),
        to: String(range.to),
        buckets: String(CHART_WIDTH),
      }).toString()}`,
    );
  let data = await fetchJson<RunPageData>(`${path}?buckets=${CHART_WIDTH}`);
  // For `npm run bench`: from the data's arrival to the charts drawn.
  performance.mark('fluksio:data');
  const show = (changed: Set<string> | null): void => {
    summary.replaceChildren(...renderSummary(data));
    updateCharts(data, charts, chartBox, controls.settings, changed, zoom);
    if (performance.getEntriesByName('fluksio:charts').length === 0) performance.mark('fluksio:charts');
    for (const stage of data.report.stages) {
      if (logs.has(stage.name) || stage.status === 'pending') continue;
      const view = new LogView(runId, stage.name);
      logs.set(stage.name, view);
      logBox.append(view.element);
      view.start();
    }
    main.dataset.status = data.report.run.status;
  };
  show(null);
  if (!data.final) {
    // Only what is new is pushed: the page says which steps it holds, and an EventSource
    // that reconnects resends the id of the last update, which says the same.
    const source = new EventSource(
      pageUrl(`${path}/live`, { buckets: String(CHART_WIDTH), after: stepsHeld(data) }),
    );
    await new Promise<void>((resolve, reject) => {
      // An EventSource reconnects by itself; one the server refused (the run is gone, the link expired) is closed.
      source.addEventListener('error', () => {
        if (source.readyState === EventSource.CLOSED)
          reject(new Error('The live view of this run was refused: reload the page.'));
      });
      source.addEventListener('update', (event) => {
        const next = JSON.parse((event as MessageEvent<string>).data) as RunPageData;
        let changed: Set<string> | null;
        ({ data, changed } = mergeSeries(data, next));
        show(changed);
      });
      source.addEventListener('end', () => {
        source.close();
        resolve();
      });
    });
  }
  main.dataset.final = 'true';
}

/** `name:lastStep,…` of the series the page holds: what a live stream need not send again. */
function stepsHeld(data: RunPageData): string {
  return Object.entries(data.series)
    .filter(([, series]) => series.points.length > 0)
    .map(([name, series]) => `${encodeURIComponent(name)}:${series.points.at(-1)!.step}`)
    .join(',');
}

/**
 * The page's data with `next`'s points appended to the series it held (a point at or
 * before a step held is one the page has: a stream that resumed sent it again), and the
 * names whose points changed; a whole `next` replaces everything.
 */
function mergeSeries(
  held: RunPageData,
  next: RunPageData,
): { data: RunPageData; changed: Set<string> | null } {
  if (!next.partial) return { data: next, changed: null };
  const changed = new Set<string>();
  const series = { ...held.series };
  for (const [name, more] of Object.entries(next.series)) {
    const before = series[name];
    const last = before?.points.at(-1)?.step ?? -Infinity;
    let from = 0;
    while (from < more.points.length && more.points[from]!.step <= last) from++;
    if (before && from === more.points.length) continue;
    const fresh = from === 0 ? more.points : more.points.slice(from);
    series[name] = before
      ? {
          ...more,
          points: [...before.points, ...fresh],
          ...(before.total === undefined ? {} : { total: before.total + fresh.length }),
        }
      : more;
    changed.add(name);
  }
  return { data: { ...next, series, baselineSeries: held.baselineSeries }, changed };
}

function updateCharts(
  data: RunPageData,
  charts: Map<string, MetricChart>,
  box: HTMLElement,
  settings: ReturnType<typeof chartControls>['settings'],
  /** The series with new points; null for all. */
  changed: Set<string> | null,
  zoom: (name: string, range: { from: number; to: number }) => Promise<SeriesRangeData>,
): void {
  const names = [...new Set([...Object.keys(data.series), ...Object.keys(data.baselineSeries)])];
  if (names.length === 0 && charts.size === 0) {
    box.replaceChildren(h('p', { class: 'empty' }, 'No metric was streamed (yet).'));
    return;
  }
  if (charts.size === 0) box.replaceChildren();
  names.forEach((name, i) => {
    let chart = charts.get(name);
    if (chart && changed && !changed.has(name)) return;
    if (!chart) {
      chart = new MetricChart(name, settings, (range) => zoom(name, range));
      charts.set(name, chart);
      box.append(chart.element);
    }
    const color = PALETTE[i % PALETTE.length]!;
    const curves: Curve[] = [];
    const own = data.series[name];
    if (own) curves.push({ label: 'this run', points: own.points, total: own.total, color });
    const base = data.baselineSeries[name];
    if (base && data.report.baseline)
      curves.push({
        label: `baseline ${short(data.report.baseline.id)}`,
        points: base.points,
        total: base.total,
        color: '#777777',
        dashed: true,
      });
    chart.update(curves);
  });
}

function renderSummary(data: RunPageData): Node[] {
  const { run, stages, diff, baseline } = data.report;
  const commit = run.commit
    ? data.commitUrl
      ? h('a', { href: data.commitUrl }, short(run.commit))
      : h('code', {}, short(run.commit))
    : '—';
  const stamp = h(
    'dl',
    { class: 'stamp' },
    ...[
      ['commit', commit],
      ['code digest', h('code', {}, short(run.codeDigest))],
      [
        'dirty',
        run.dirty ? `yes${run.dirtyReasons.length ? ` (${run.dirtyReasons.join('; ')})` : ''}` : 'no',
      ],
      ['params', formatParams(run.params) || '(defaults)'],
      ['runner', data.runner ?? '—'],
      [
        'trigger',
        data.trigger
          ? `${data.trigger}${data.prNumber ? ` (#${data.prNumber})` : ''}`
          : data.repository === 'local'
            ? 'local'
            : '—',
      ],
      ['duration', formatDuration(run.durationMs)],
      [
        'baseline',
        baseline
          ? h('a', { href: pageUrl(`/runs/${encodeURIComponent(baseline.id)}`) }, short(baseline.id))
          : 'none',
      ],
    ].flatMap(([term, value]) => [h('dt', {}, term as string), h('dd', {}, value as Node | string)]),
  );
  const stageRows = stages.map((stage) =>
    h(
      'tr',
      { 'data-stage': stage.name, 'data-status': stage.status },
      h('th', { scope: 'row' }, stage.name),
      h('td', {}, h('span', { class: `badge ${stage.status}` }, stage.status)),
      h('td', { class: 'num' }, formatDuration(stage.durationMs)),
      h(
        'td',
        {},
        stage.cachedFrom && stage.cachedFromTeam
          ? `from the team's cache, run ${short(stage.cachedFrom)}`
          : stage.cachedFrom
            ? [
                'cached from ',
                h(
                  'a',
                  { href: pageUrl(`/runs/${encodeURIComponent(stage.cachedFrom)}`) },
                  short(stage.cachedFrom),
                ),
              ]
            : null,
        stage.pending ? h('span', { class: 'pending' }, describeJobPending(stage.pending)) : null,
        stage.reasons.length > 0 ? h('span', { class: 'why' }, `re-ran: ${stage.reasons.join('; ')}`) : null,
        stage.error ? h('span', { class: 'error' }, stage.error) : null,
      ),
    ),
  );
  const diffRows = diff.map((row) =>
    h(
      'tr',
      {},
      h('th', { scope: 'row' }, row.name),
      h('td', { class: 'num' }, formatNumber(row.baseline)),
      h('td', { class: 'num' }, formatNumber(row.value)),
      h('td', { class: 'num' }, formatNumber(row.delta)),
      h('td', { class: 'num' }, row.deltaPct === null ? '—' : `${row.deltaPct.toFixed(1)}%`),
      h('td', {}, row.better === null ? '' : row.better ? '✅ better' : '❌ worse'),
    ),
  );
  return [
    h('h1', {}, `Run ${run.id} `, h('span', { class: `badge ${run.status}`, id: 'run-status' }, run.status)),
    run.reason ? h('p', { class: 'reason' }, run.reason) : null,
    stamp,
    ...data.tracebacks.map((traceback) =>
      h(
        'section',
        { class: 'traceback', 'aria-label': `Failure of ${traceback.stage}` },
        h(
          'h2',
          {},
          `${traceback.stage} failed`,
          traceback.location ? ' at ' : '',
          traceback.url
            ? h('a', { href: traceback.url, class: 'raised' }, traceback.location)
            : (traceback.location ?? ''),
        ),
        h('pre', {}, traceback.text),
      ),
    ),
    h('h2', {}, 'Stages'),
    h(
      'table',
      { class: 'stages' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['stage', 'status', 'duration', 'details'].map((name) => h('th', { scope: 'col' }, name)),
        ),
      ),
      h('tbody', {}, stageRows),
    ),
    h('h2', {}, 'Outputs'),
    outputsTable(run.id, stages) ?? h('p', { class: 'empty' }, 'No outputs stored (yet).'),
    h('h2', {}, 'Metrics'),
    diff.length === 0
      ? h('p', { class: 'empty' }, 'No metrics yet.')
      : h(
          'table',
          { class: 'diff' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['metric', 'baseline', 'this run', 'Δ', 'Δ%', ''].map((name) =>
                h('th', { scope: 'col' }, name),
              ),
            ),
          ),
          h('tbody', {}, diffRows),
        ),
  ].filter((node): node is HTMLElement => node !== null);
}

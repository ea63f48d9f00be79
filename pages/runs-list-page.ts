import type { RunListPageData } from '../schemas/page-data.js';
import { h } from './dom.js';
import { formatDuration, formatNumber, formatParams, short } from './format.js';
import { fetchJson, pageUrl } from './page-link.js';

const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled', 'timed_out', 'abandoned'];
/** The query keys that are filters; the rest (a page's credential) pass through pageUrl. */
const FILTERS = ['repo', 'pr', 'branch', 'status', 'before'];

/**
 * A repository's (or a pull request's) runs, newest first, a page at a time: a filter form
 * (branch, status, params as `lr=0.1 seed=1`), a table linking each run's page, and a link
 * to the older runs. The filters live in the URL, so a filtered list is a link to share.
 */
export async function runsListPage(main: HTMLElement): Promise<void> {
  const current = new URLSearchParams(location.search);
  const apiQuery = new URLSearchParams();
  for (const [key, value] of current)
    if (FILTERS.includes(key) || key.startsWith('param.')) apiQuery.set(key, value);
  const data = await fetchJson<RunListPageData>(`/pages/api/runs?${apiQuery.toString()}`);
  const paramText = [...current]
    .filter(([key]) => key.startsWith('param.'))
    .map(([key, value]) => `${key.slice('param.'.length)}=${value}`)
    .join(' ');

  const form = h(
    'form',
    {
      class: 'filters',
      role: 'search',
      'aria-label': 'Filter runs',
      onsubmit: (event: Event) => {
        event.preventDefault();
        const fields = new FormData(event.target as HTMLFormElement);
        const next: Record<string, string> = {};
        if (data.repository !== 'local') next.repo = data.repository;
        if (data.prNumber !== null) next.pr = String(data.prNumber);
        const branch = String(fields.get('branch') ?? '').trim();
        if (branch) next.branch = branch;
        const status = String(fields.get('status') ?? '');
        if (status) next.status = status;
        for (const pair of String(fields.get('params') ?? '')
          .split(/\s+/)
          .filter(Boolean)) {
          const at = pair.indexOf('=');
          if (at > 0) next[`param.${pair.slice(0, at)}`] = pair.slice(at + 1);
        }
        location.assign(pageUrl('/runs', next));
      },
    },
    h('label', {}, 'Branch ', h('input', { name: 'branch', value: current.get('branch') ?? '', size: 16 })),
    h(
      'label',
      {},
      'Status ',
      h(
        'select',
        { name: 'status' },
        h('option', { value: '' }, 'any'),
        ...STATUSES.map((status) =>
          h('option', { value: status, selected: current.get('status') === status }, status),
        ),
      ),
    ),
    h(
      'label',
      {},
      'Params ',
      h('input', { name: 'params', value: paramText, placeholder: 'lr=0.1 seed=1', size: 24 }),
    ),
    h('button', { type: 'submit' }, 'Filter'),
  );

  const rows = data.runs.map((run) =>
    h(
      'tr',
      { 'data-run': run.id, 'data-status': run.status },
      h(
        'th',
        { scope: 'row' },
        h('a', { href: pageUrl(`/runs/${encodeURIComponent(run.id)}`) }, short(run.id)),
      ),
      h('td', {}, h('span', { class: `badge ${run.status}` }, run.status)),
      h('td', {}, run.branch ?? '—'),
      h('td', {}, run.prNumber === null ? '—' : `#${run.prNumber}`),
      h('td', {}, h('code', {}, short(run.commit))),
      h('td', {}, formatParams(run.params) || '(defaults)'),
      h(
        'td',
        {},
        Object.entries(run.metrics)
          .slice(0, 3)
          .map(([name, value]) => `${name} ${formatNumber(value)}`)
          .join(' · '),
      ),
      h('td', {}, h('time', { datetime: run.createdAt }, run.createdAt.replace('T', ' ').slice(0, 19))),
      h('td', { class: 'num' }, formatDuration(run.durationMs)),
    ),
  );
  const older =
    data.next === null
      ? null
      : h(
          'a',
          {
            class: 'older',
            href: pageUrl('/runs', {
              ...Object.fromEntries(apiQuery),
              before: data.next,
            }),
          },
          'Older runs →',
        );
  main.replaceChildren(
    h(
      'h1',
      {},
      `Runs of ${data.repository}`,
      data.prNumber === null ? '' : ` · pull request #${data.prNumber}`,
    ),
    form,
    data.runs.length === 0
      ? h('p', { class: 'empty' }, 'No runs match.')
      : h(
          'table',
          { class: 'run-list' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...[
                'run',
                'status',
                'branch',
                'PR',
                'commit',
                'params',
                'metrics',
                'created (UTC)',
                'duration',
              ].map((name) => h('th', { scope: 'col' }, name)),
            ),
          ),
          h('tbody', {}, rows),
        ),
    older ?? '',
  );
  main.dataset.final = 'true';
}

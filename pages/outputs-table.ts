import type { RunPageData } from '../schemas/page-data.js';
import { formatBytes } from '../core/text/format.js';
import { h } from './dom.js';
import { short } from './format.js';
import { pageUrl } from './page-link.js';

/**
 * What the run's stages produced: each out's path, digest and size; a file downloads
 * (the server verifies its digest while sending it), a directory is pulled whole with
 * `fluksio pull`. Null when no stage stored any.
 */
export function outputsTable(runId: string, stages: RunPageData['report']['stages']): HTMLElement | null {
  const rows = stages.flatMap((stage) =>
    stage.outs.map((out) =>
      h(
        'tr',
        { 'data-out': out.path },
        h('td', {}, stage.name),
        h(
          'th',
          { scope: 'row' },
          out.kind === 'file'
            ? h(
                'a',
                {
                  href: pageUrl(
                    `/pages/api/runs/${encodeURIComponent(runId)}/outs/${encodeURIComponent(out.digest)}`,
                  ),
                  download: out.path.split('/').at(-1) ?? out.path,
                  class: 'download',
                },
                out.path,
              )
            : `${out.path}/`,
        ),
        h('td', { class: 'num' }, formatBytes(out.size)),
        h('td', {}, h('code', { title: out.digest }, short(out.digest))),
        h('td', {}, out.kind === 'dir' ? `a directory: fluksio pull ${short(runId)}` : ''),
      ),
    ),
  );
  if (rows.length === 0) return null;
  return h(
    'table',
    { class: 'outputs' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['stage', 'output', 'size', 'digest', ''].map((name) => h('th', { scope: 'col' }, name)),
      ),
    ),
    h('tbody', {}, rows),
  );
}

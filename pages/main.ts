import { comparePage } from './compare-page.js';
import { h } from './dom.js';
import { runPage } from './run-page.js';
import { runsListPage } from './runs-list-page.js';
import { sweepPage } from './sweep-page.js';
import { messageOf } from '../core/text/message-of.js';

/** Draws the page the server's shell names (app/pages/page-shell.ts). */
async function main(): Promise<void> {
  const root = document.getElementById('main');
  if (!root) return;
  const subject = root.dataset.subject ?? '';
  try {
    if (root.dataset.page === 'run') await runPage(root, subject);
    else if (root.dataset.page === 'sweep') await sweepPage(root, subject);
    else if (root.dataset.page === 'compare') await comparePage(root, subject);
    else if (root.dataset.page === 'runs') await runsListPage(root);
  } catch (error) {
    root.append(h('p', { class: 'error', role: 'alert' }, messageOf(error)));
    root.dataset.failed = 'true';
  }
}

void main();

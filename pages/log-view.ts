import type { LogChunk } from '../schemas/page-data.js';
import { h } from './dom.js';
import { pageUrl } from './page-link.js';
import { plainText, renderTerminalLine } from './terminal-line.js';

/**
 * A stage's log as a terminal shows it, live: fed from the server-sent events of
 * `/pages/api/runs/:id/logs/:stage` from line 0 (an EventSource resumes from the last
 * line it got after a reconnect), closed when the server says the run is over. Lines are
 * numbered, each linkable (`#log-train-L12`), and a search box keeps only matching lines.
 */
export class LogView {
  readonly element: HTMLElement;
  private readonly list: HTMLOListElement;
  private readonly status: HTMLElement;
  private readonly search: HTMLInputElement;
  /** The raw text of each shown line, for search and for a `\r` line the next one continues. */
  private readonly raw: string[] = [];
  private source: EventSource | null = null;
  private onEnd: (() => void) | null = null;

  constructor(
    private readonly runId: string,
    readonly stage: string,
  ) {
    this.list = h('ol', { class: 'log-lines', 'aria-label': `Log of ${stage}` });
    this.status = h('span', { class: 'log-status', role: 'status' }, 'connecting…');
    this.search = h('input', {
      type: 'search',
      placeholder: 'Search this log',
      'aria-label': `Search the log of ${stage}`,
      oninput: () => this.applySearch(),
    });
    this.element = h(
      'section',
      { class: 'log', id: `log-${stage}`, 'data-stage': stage },
      h('header', { class: 'log-header' }, h('h3', {}, `Log: ${stage}`), this.search, this.status),
      this.list,
    );
  }

  /** Starts streaming; `onEnd` runs once every line of a finished run arrived. */
  start(onEnd?: () => void): void {
    this.onEnd = onEnd ?? null;
    const url = pageUrl(
      `/pages/api/runs/${encodeURIComponent(this.runId)}/logs/${encodeURIComponent(this.stage)}`,
    );
    const source = new EventSource(url);
    this.source = source;
    source.addEventListener('open', () => {
      this.status.textContent = 'live';
    });
    source.addEventListener('lines', (event) => {
      this.append(JSON.parse((event as MessageEvent<string>).data) as LogChunk);
    });
    source.addEventListener('end', () => {
      source.close();
      this.status.textContent = `${this.raw.length} lines`;
      this.element.dataset.complete = 'true';
      this.revealLinkedLine();
      this.onEnd?.();
    });
    source.addEventListener('error', () => {
      if (source.readyState !== EventSource.CLOSED) this.status.textContent = 'reconnecting…';
    });
  }

  stop(): void {
    this.source?.close();
  }

  get lineCount(): number {
    return this.raw.length;
  }

  private append(chunk: LogChunk): void {
    const query = this.search.value.toLowerCase();
    const fragment = document.createDocumentFragment();
    for (const line of chunk.lines) {
      const last = this.raw.length - 1;
      // A line the runner ended at a `\r` is continued (overwritten) by the next one,
      // as a terminal would: a progress bar stays one line that updates.
      if (last >= 0 && this.raw[last]!.endsWith('\r')) {
        this.raw[last] += line;
        const item = this.list.lastElementChild as HTMLLIElement | null;
        if (item) this.fill(item, last);
        continue;
      }
      this.raw.push(line);
      const item = h('li', { id: `log-${this.stage}-L${this.raw.length}` });
      this.fill(item, this.raw.length - 1);
      if (query && !plainText(line).toLowerCase().includes(query)) item.hidden = true;
      fragment.append(item);
    }
    this.list.append(fragment);
  }

  private fill(item: HTMLLIElement, index: number): void {
    const number = index + 1;
    const anchor = h(
      'a',
      { class: 'ln', href: `#log-${this.stage}-L${number}`, 'aria-label': `line ${number}` },
      String(number),
    );
    item.replaceChildren(anchor, h('span', { class: 'lt' }, ...renderTerminalLine(this.raw[index]!)));
  }

  private applySearch(): void {
    const started = performance.now();
    const query = this.search.value.toLowerCase();
    const items = this.list.children;
    let shown = 0;
    for (let i = 0; i < items.length; i++) {
      const hit = !query || plainText(this.raw[i]!).toLowerCase().includes(query);
      (items[i] as HTMLElement).hidden = !hit;
      if (hit) shown++;
    }
    this.status.textContent = query
      ? `${shown} of ${this.raw.length} lines match`
      : `${this.raw.length} lines`;
    // For `npm run bench`: how long the search took.
    this.element.dataset.searchMs = (performance.now() - started).toFixed(1);
  }

  private revealLinkedLine(): void {
    const target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target && this.list.contains(target)) {
      target.classList.add('linked');
      target.scrollIntoView({ block: 'center' });
    }
  }
}

import type { LogChunk } from '../schemas/page-data.js';
import { h } from './dom.js';
import { LogStore } from './log-store.js';
import { pageUrl } from './page-link.js';
import { renderTerminalLine } from './terminal-line.js';

/** The height of one terminal row, in CSS pixels (`.log-lines li` uses it too). */
const ROW_PX = 18;
/** The tallest a log's viewport grows before it scrolls. */
const VIEWPORT_PX = 480;
/** Lines drawn beyond each edge of the viewport, so scrolling shows no gap. */
const OVERSCAN = 30;

/**
 * A stage's log as a terminal shows it, live and windowed: fed from the server-sent
 * events of `/pages/api/runs/:id/logs/:stage` (a long log arrives in pieces; an
 * EventSource resumes from the last piece's cursor after a reconnect), kept in a LogStore,
 * and only the lines on screen (and a few beyond) are in the DOM, coloured as they are
 * drawn. Long lines wrap at the viewport's width counted in characters (the font is
 * monospace): a line takes ceil(length / columns) rows, so every line's place is known
 * without measuring it. Lines are numbered and linkable (`#log-train-L12` scrolls to
 * line 12, also before it has arrived); search scans the store, counts the matching
 * lines and jumps to the next or previous one.
 */
export class LogView {
  readonly element: HTMLElement;
  private readonly store = new LogStore();
  private readonly viewport: HTMLElement;
  private readonly spacer: HTMLElement;
  private readonly list: HTMLOListElement;
  private readonly status: HTMLElement;
  private readonly search: HTMLInputElement;
  /** rowTop[i]: the rows above line i, for lines 0 … store.length (the last is the total). */
  private rowTop = new Float64Array(1024);
  private columns = 0;
  private drawn = { first: -1, last: -1, version: -1 };
  private version = 0;
  private frame = 0;
  /** While true, new lines keep the viewport at the end, as a terminal does. */
  private following = true;
  /** The line a `#log-…-L<n>` address names (0-based), shown once it has arrived. */
  private linked: number | null = null;
  private linkPending = false;
  private matches: number[] = [];
  private query = '';
  private current = -1;
  private source: EventSource | null = null;
  private complete = false;

  constructor(
    private readonly runId: string,
    readonly stage: string,
  ) {
    this.list = h('ol', { class: 'log-lines' });
    this.spacer = h('div', { class: 'log-spacer' }, this.list);
    this.viewport = h(
      'div',
      {
        class: 'log-viewport',
        tabindex: 0,
        role: 'region',
        'aria-label': `Log of ${stage}`,
        onscroll: () => {
          this.following = this.atEnd();
          this.schedule();
        },
      },
      this.spacer,
    );
    this.status = h('span', { class: 'log-status', role: 'status' }, 'connecting…');
    this.search = h('input', {
      type: 'search',
      placeholder: 'Search this log',
      'aria-label': `Search the log of ${stage}`,
      oninput: () => this.runSearch(),
      onkeydown: (event: Event) => {
        const key = event as KeyboardEvent;
        if (key.key !== 'Enter') return;
        key.preventDefault();
        this.jump(key.shiftKey ? -1 : 1);
      },
    });
    this.element = h(
      'section',
      { class: 'log', id: `log-${stage}`, 'data-stage': stage, 'data-lines': 0 },
      h(
        'header',
        { class: 'log-header' },
        h('h3', {}, `Log: ${stage}`),
        this.search,
        h('button', { type: 'button', 'aria-label': 'Previous match', onclick: () => this.jump(-1) }, '↑'),
        h('button', { type: 'button', 'aria-label': 'Next match', onclick: () => this.jump(1) }, '↓'),
        this.status,
      ),
      this.viewport,
    );
    new ResizeObserver(() => this.measure()).observe(this.viewport);
    addEventListener('hashchange', () => this.followHash());
    this.followHash();
  }

  /** Starts streaming; `onEnd` runs once every line of a finished run arrived. */
  start(onEnd?: () => void): void {
    const url = pageUrl(
      `/pages/api/runs/${encodeURIComponent(this.runId)}/logs/${encodeURIComponent(this.stage)}`,
    );
    const source = new EventSource(url);
    this.source = source;
    source.addEventListener('open', () => {
      if (!this.complete) this.status.textContent = 'live';
    });
    source.addEventListener('lines', (event) => {
      this.append(JSON.parse((event as MessageEvent<string>).data) as LogChunk);
    });
    source.addEventListener('end', () => {
      source.close();
      this.complete = true;
      this.element.dataset.complete = 'true';
      this.showStatus();
      if (this.linkPending) this.reveal();
      onEnd?.();
    });
    source.addEventListener('error', () => {
      if (source.readyState !== EventSource.CLOSED) this.status.textContent = 'reconnecting…';
    });
  }

  stop(): void {
    this.source?.close();
  }

  get lineCount(): number {
    return this.store.length;
  }

  private append(chunk: LogChunk): void {
    // For `npm run bench`: when the first piece of a log reached the page.
    if (performance.getEntriesByName('fluksio:log').length === 0) performance.mark('fluksio:log');
    const changed = this.store.append(chunk.from, chunk.lines);
    this.version++;
    this.layout(changed);
    if (this.query) {
      // Lines from `changed` on are new or grew: search them again.
      this.matches = this.matches.filter((line) => line < changed);
      this.matches.push(...this.store.search(this.query, changed));
    }
    this.element.dataset.lines = String(this.store.length);
    this.showStatus();
    if (this.linkPending && this.linked !== null && this.linked < this.store.length) this.reveal();
    else if (this.following) this.viewport.scrollTop = this.viewport.scrollHeight;
    this.schedule();
  }

  /** Row positions from line `from` on (all of them when the width changed). */
  private layout(from: number): void {
    const count = this.store.length;
    if (this.rowTop.length < count + 1) {
      const grown = new Float64Array(Math.max(count + 1, this.rowTop.length * 2));
      grown.set(this.rowTop);
      this.rowTop = grown;
    }
    // Until the viewport is measured (it may not be on the page yet), a typical width.
    const columns = this.columns || 120;
    const { rowTop, store } = this;
    for (let i = from; i < count; i++) {
      rowTop[i + 1] = rowTop[i]! + Math.max(1, Math.ceil(store.width(i) / columns));
    }
    const height = rowTop[count]! * ROW_PX;
    this.spacer.style.height = `${height}px`;
    this.viewport.style.height = `${Math.min(VIEWPORT_PX, height + 8)}px`;
  }

  /** Columns that fit beside the line numbers; a new width lays every line out again. */
  private measure(): void {
    const probe = h('span', { class: 'log-probe' }, '0'.repeat(100));
    this.list.append(probe);
    const charWidth = probe.getBoundingClientRect().width / 100 || 7.2;
    probe.remove();
    const gutter = parseFloat(getComputedStyle(this.viewport).getPropertyValue('--gutter')) || 64;
    const columns = Math.max(20, Math.floor((this.viewport.clientWidth - gutter - 4) / charWidth));
    if (columns === this.columns) return;
    this.columns = columns;
    this.viewport.style.setProperty('--columns', String(columns));
    this.version++;
    this.layout(0);
    this.schedule();
  }

  private schedule(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.draw();
    });
  }

  /** The line at row `row` (binary search over rowTop). */
  private lineAtRow(row: number): number {
    let low = 0;
    let high = this.store.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.rowTop[middle]! <= row) low = middle;
      else high = middle - 1;
    }
    return Math.max(0, low);
  }

  private draw(): void {
    const count = this.store.length;
    if (count === 0) return this.list.replaceChildren();
    const top = this.viewport.scrollTop / ROW_PX;
    const bottom = top + this.viewport.clientHeight / ROW_PX;
    const first = Math.max(0, this.lineAtRow(top) - OVERSCAN);
    const last = Math.min(count - 1, this.lineAtRow(bottom) + OVERSCAN);
    const same =
      this.drawn.first === first && this.drawn.last === last && this.drawn.version === this.version;
    if (!same) {
      const items: HTMLElement[] = [];
      for (let i = first; i <= last; i++) items.push(this.item(i));
      this.list.style.top = `${this.rowTop[first]! * ROW_PX}px`;
      this.list.replaceChildren(...items);
      this.drawn = { first, last, version: this.version };
    }
    this.element.dataset.firstDrawn = String(first + 1);
    this.element.dataset.lastDrawn = String(last + 1);
  }

  private item(index: number): HTMLElement {
    const number = index + 1;
    const classes = [
      index === this.linked ? 'linked' : '',
      this.query && this.store.matches(index, this.query) ? 'match' : '',
      this.current >= 0 && this.matches[this.current] === index ? 'current' : '',
    ].filter(Boolean);
    const rows = this.rowTop[index + 1]! - this.rowTop[index]!;
    return h(
      'li',
      {
        id: `log-${this.stage}-L${number}`,
        style: `height:${rows * ROW_PX}px`,
        ...(classes.length > 0 ? { class: classes.join(' ') } : {}),
      },
      h(
        'a',
        { class: 'ln', href: `#log-${this.stage}-L${number}`, 'aria-label': `line ${number}` },
        String(number),
      ),
      h('span', { class: 'lt' }, ...renderTerminalLine(this.store.raw[index]!)),
    );
  }

  private atEnd(): boolean {
    const { scrollTop, clientHeight, scrollHeight } = this.viewport;
    return scrollTop + clientHeight >= scrollHeight - ROW_PX;
  }

  /** Scrolls line `index` to the middle of the viewport and the viewport into the page's view. */
  private scrollToLine(index: number): void {
    this.following = false;
    const middle = (this.rowTop[index]! + this.rowTop[index + 1]!) / 2;
    this.viewport.scrollTop = Math.max(0, middle * ROW_PX - this.viewport.clientHeight / 2);
    this.draw();
    document.getElementById(`log-${this.stage}-L${index + 1}`)?.scrollIntoView({ block: 'center' });
  }

  private followHash(): void {
    const match = new RegExp(`^#log-${this.stage}-L(\\d+)$`).exec(location.hash);
    if (!match) return;
    this.linked = Number(match[1]) - 1;
    this.linkPending = true;
    this.following = false;
    this.version++;
    if (this.linked < this.store.length) this.reveal();
  }

  private reveal(): void {
    if (this.linked === null || this.linked >= this.store.length) return;
    this.linkPending = false;
    this.scrollToLine(this.linked);
  }

  private runSearch(): void {
    const started = performance.now();
    this.query = this.search.value;
    this.matches = this.store.search(this.query);
    this.current = -1;
    this.version++;
    this.showStatus();
    // For `npm run bench`: how long the search took.
    this.element.dataset.searchMs = (performance.now() - started).toFixed(1);
    this.element.dataset.matches = String(this.matches.length);
    if (this.matches.length > 0) this.jump(1);
    else this.schedule();
  }

  /** Moves to the next (1) or previous (-1) matching line, wrapping around. */
  private jump(direction: 1 | -1): void {
    if (this.matches.length === 0) return;
    this.current = (this.current + direction + this.matches.length) % this.matches.length;
    this.version++;
    this.showStatus();
    this.element.dataset.currentMatch = String(this.matches[this.current]! + 1);
    this.scrollToLine(this.matches[this.current]!);
  }

  private showStatus(): void {
    const total = this.store.length;
    if (this.query) {
      const at = this.current >= 0 ? ` (at ${this.current + 1})` : '';
      this.status.textContent = `${this.matches.length} of ${total} lines match${at}`;
    } else this.status.textContent = this.complete ? `${total} lines` : `${total} lines, live`;
  }
}

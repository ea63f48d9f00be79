import { plainText } from './terminal-line.js';

/**
 * A stage's log in the page, as lines a terminal shows: a line the runner ended at a `\r`
 * is continued (overwritten) by the next, so a progress bar stays one line. Beside each
 * raw line (rendered with its colours only while on screen) it keeps its plain text in
 * lower case, which search scans — never the DOM.
 */
export class LogStore {
  /** Lines as printed, colour codes included. */
  readonly raw: string[] = [];
  /** Each line's plain text, lower-cased: what search compares. */
  private readonly folded: string[] = [];
  /** Lines received from the server: a chunk resent after a reconnect is skipped up to here. */
  private received = 0;

  get length(): number {
    return this.raw.length;
  }

  /**
   * Adds the server's lines `from` … (a chunk of the log stream); returns the index of the
   * first line that changed (a `\r` line continued, or the first new one).
   */
  append(from: number, lines: readonly string[]): number {
    const skip = Math.max(0, this.received - from);
    let changed = this.raw.length;
    for (let i = skip; i < lines.length; i++) {
      const line = lines[i]!;
      const last = this.raw.length - 1;
      if (last >= 0 && this.raw[last]!.endsWith('\r')) {
        this.raw[last] += line;
        this.folded[last] = fold(this.raw[last]!);
        changed = Math.min(changed, last);
        continue;
      }
      this.raw.push(line);
      this.folded.push(fold(line));
    }
    this.received = Math.max(this.received, from + lines.length);
    return changed;
  }

  /** Characters line `index` (0-based) shows: what wrapping counts. */
  width(index: number): number {
    return this.folded[index]!.length;
  }

  /** Whether line `index` contains `query`, case-insensitively. */
  matches(index: number, query: string): boolean {
    return this.folded[index]!.includes(query.toLowerCase());
  }

  /** Indexes of the lines from `start` whose text contains `query`, case-insensitively. */
  search(query: string, start = 0): number[] {
    const needle = query.toLowerCase();
    const hits: number[] = [];
    if (!needle) return hits;
    const { folded } = this;
    for (let i = start; i < folded.length; i++) if (folded[i]!.includes(needle)) hits.push(i);
    return hits;
  }
}

function fold(line: string): string {
  // Most lines carry neither colours nor `\r`: lower-casing is all they need.
  return (line.includes('\u001b') || line.includes('\r') ? plainText(line) : line).toLowerCase();
}

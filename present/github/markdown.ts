// Markdown for GitHub, within its limits: shared by every check run, reply, comment and step summary.

/** UTF-8 size: what GitHub's "bytesize" limits count. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** At most `max` UTF-16 units, never splitting a surrogate pair, ending in `…` when cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  if (/[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** At most `max` UTF-8 bytes, cut visibly. */
export function clipBytes(text: string, max: number): string {
  if (byteLength(text) <= max) return text;
  const notice = ` … (cut to GitHub's ${max.toLocaleString('en-US')}-byte limit)`;
  const room = max - byteLength(notice);
  // The longest prefix within the room: byte length grows with the prefix, so bisect.
  let low = 0;
  let high = Math.min(text.length, room);
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (byteLength(text.slice(0, middle)) <= room) low = middle;
    else high = middle - 1;
  }
  if (/[\uD800-\uDBFF]/.test(text.charAt(low - 1))) low -= 1;
  return `${text.slice(0, low)}${notice}`;
}

/**
 * Markdown bounded to `maxBytes`, cut at a line boundary, with a closing fence if the cut
 * fell inside a code block, and a last line saying how much was cut and where the whole
 * of it is (`pointer`).
 */
export function fitMarkdown(markdown: string, maxBytes: number, pointer: string): string {
  if (byteLength(markdown) <= maxBytes) return markdown;
  const lines = markdown.split('\n');
  const noticeFor = (cutLines: number) =>
    `\n\n---\n✂️ **Truncated**: ${cutLines.toLocaleString('en-US')} more lines did not fit GitHub's limit of ${maxBytes.toLocaleString('en-US')} bytes; everything is in ${pointer}.`;
  // Budgeted with the longest notice (every line cut), so the real one always fits.
  const budget = maxBytes - byteLength(noticeFor(lines.length));
  let fence: string | null = null;
  let kept = 0;
  let used = 0;
  for (const line of lines) {
    const nextFence = fenceAfter(fence, line);
    const closing = nextFence ? nextFence.length + 1 : 0;
    const size = byteLength(line) + 1;
    if (used + size + closing > budget) break;
    used += size;
    kept += 1;
    fence = nextFence;
  }
  if (kept === 0) return noticeFor(lines.length).trimStart();
  const head = lines.slice(0, kept).join('\n');
  return `${head}${fence ? `\n${fence}` : ''}${noticeFor(lines.length - kept)}`;
}

/** The open code fence after `line`, given the one open before it (backtick fences only: the only kind written here). */
function fenceAfter(open: string | null, line: string): string | null {
  const match = /^ {0,3}(`{3,})(.*)$/.exec(line);
  if (!match) return open;
  const [, ticks = '', rest = ''] = match;
  if (open === null) return ticks;
  return ticks.length >= open.length && rest.trim() === '' ? null : open;
}

/** A fenced code block that no backtick run in `text` can close early. */
export function codeBlock(text: string, info = ''): string {
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(text) + 1));
  return `${fence}${info}\n${text}\n${fence}`;
}

/** An inline code span holding `text` as is (newlines become blanks, `|` is escaped for tables). */
export function codeSpan(text: string): string {
  const body = text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
  const fence = '`'.repeat(longestBacktickRun(body) + 1);
  const pad = body.startsWith('`') || body.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${body}${pad}${fence}`;
}

/**
 * Text shown literally in Markdown prose, a list item or a table cell, on one line: inline
 * syntax is backslash-escaped everywhere, block syntax (`#`, `-`, `1.`) only where it
 * would start a block.
 */
export function escapeMarkdown(text: string): string {
  return escapeTableCell(text)
    .replace(/^([#+=-])/, '\\$1')
    .replace(/^(\d+)([.)])/, '$1\\$2');
}

/**
 * Text shown literally in a table cell, on one line: inline syntax is backslash-escaped
 * (`|` included, so a value cannot split its row); a cell starts no block, so `0.5` and
 * `-1` stay as they are.
 */
export function escapeTableCell(text: string): string {
  return oneLine(text).replace(/[\\`*_[\]<>|~&]/g, '\\$&');
}

function longestBacktickRun(text: string): number {
  return Math.max(0, ...[...text.matchAll(/`+/g)].map((match) => match[0].length));
}

/** Text on one line: line breaks and the blanks around them become one blank. */
export function oneLine(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, ' ').trim();
}

import Anser from 'anser';

/** SGR sequences (colours, bold): the only escapes a log keeps (the runner drops the rest). */
// eslint-disable-next-line no-control-regex -- the escape character is exactly what this looks for.
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * What a terminal shows for one printed line: each `\r` returns to the line's start and
 * the text after it overwrites what was there, so a tqdm bar redrawn a hundred times
 * shows its latest state once. Segments carrying colour codes are not overlaid character
 * by character (the codes have no width): the last non-empty segment wins.
 */
export function collapseCarriageReturns(line: string): string {
  if (!line.includes('\r')) return line;
  const segments = line.split('\r');
  let shown = '';
  let coloured = false;
  for (const segment of segments) {
    if (segment === '') continue;
    if (ANSI.test(segment)) coloured = true;
    ANSI.lastIndex = 0;
    shown = coloured ? segment : segment + shown.slice(segment.length);
  }
  return shown;
}

/**
 * A log line as DOM nodes: collapsed as a terminal shows it, colours and bold kept as
 * inline styles (anser), every text as a text node.
 */
export function renderTerminalLine(line: string): Node[] {
  const collapsed = collapseCarriageReturns(line);
  if (!collapsed.includes('\u001b')) return [document.createTextNode(collapsed)];
  return Anser.ansiToJson(collapsed, { remove_empty: true }).map((entry) => {
    if (!entry.fg && !entry.bg && entry.decorations.length === 0)
      return document.createTextNode(entry.content);
    const span = document.createElement('span');
    span.textContent = entry.content;
    if (entry.fg) span.style.color = `rgb(${entry.fg})`;
    if (entry.bg) span.style.backgroundColor = `rgb(${entry.bg})`;
    if (entry.decorations.includes('bold')) span.style.fontWeight = 'bold';
    if (entry.decorations.includes('italic')) span.style.fontStyle = 'italic';
    if (entry.decorations.includes('underline')) span.style.textDecoration = 'underline';
    return span;
  });
}

/** The plain text of a line, for search. */
export function plainText(line: string): string {
  return collapseCarriageReturns(line).replace(ANSI, '');
}

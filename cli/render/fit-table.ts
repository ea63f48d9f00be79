import Table from 'cli-table3';
import stringWidth from 'string-width';
import { borderlessChars } from '../../present/terminal/borderless-chars.js';

/** Room between two columns. */
const GAP = 2;
/** The narrowest a column is cut to when even its longest word cannot fit. */
const LAST_RESORT_COLUMN = 4;

export interface FitTableInput {
  head: string[];
  rows: string[][];
  /** The terminal's width; `Infinity` when nothing limits it (a pipe). */
  width: number;
  /**
   * Columns (by heading) that may be left out, the first given first, when the table is
   * wider than `width` even with its long cells wrapped down to a few columns.
   */
  droppable?: string[];
}

/**
 * A table without a box, columns two spaces apart, that holds within `width`: the widest
 * columns are wrapped first, and only when that is not enough are `droppable` columns left
 * out (a line under the table names them). Boxes are not drawn because a box cut by a
 * narrow terminal is unreadable, while a wrapped plain column still reads.
 */
export function fitTable({ head, rows, width, droppable = [] }: FitTableInput): string {
  let columns = head.map((_, index) => index);
  const dropped: string[] = [];
  let widths = naturalWidths(head, rows);
  const floors = longestWords(head, rows);
  const total = (shown: number[], each: number[]) =>
    shown.reduce((sum, column) => sum + (each[column] ?? 0), 0) + GAP * Math.max(0, shown.length - 1);
  const wrapped = (shown: number[]) =>
    shrink(shown, widths, floors, width - GAP * Math.max(0, shown.length - 1));
  for (const name of droppable) {
    if (total(columns, wrapped(columns)) <= width) break;
    const index = head.indexOf(name);
    if (index < 0) continue;
    columns = columns.filter((column) => column !== index);
    dropped.push(name);
  }
  widths = wrapped(columns);
  // Words too long for any arrangement: cut them (cli-table3 ends a cut cell with "…")
  // rather than let the lines run past the terminal's edge.
  const room = width - GAP * Math.max(0, columns.length - 1);
  if (total(columns, widths) > width)
    widths = shrink(
      columns,
      widths,
      widths.map(() => LAST_RESORT_COLUMN),
      room,
    );
  const table = new Table({
    head: columns.map((column) => head[column] ?? ''),
    colWidths: columns.map((column) => widths[column] ?? 1),
    wordWrap: true,
    wrapOnWordBoundary: true,
    chars: borderlessChars('', ' '.repeat(GAP)),
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  for (const row of rows) table.push(columns.map((column) => row[column] ?? ''));
  const text = table
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');
  return dropped.length > 0 ? `${text}\n(too narrow for: ${dropped.join(', ')})` : text;
}

/** Each column's width with no wrapping: its widest cell or heading. */
function naturalWidths(head: string[], rows: string[][]): number[] {
  return head.map((title, column) =>
    Math.max(stringWidth(title), ...rows.map((row) => longestLine(row[column] ?? ''))),
  );
}

/** Each column's narrowest wrap: its longest word (an id is never cut). */
function longestWords(head: string[], rows: string[][]): number[] {
  return head.map((title, column) =>
    Math.max(
      ...[title, ...rows.map((row) => row[column] ?? '')].flatMap((cell) =>
        cell.split(/\s+/).map((word) => stringWidth(word)),
      ),
    ),
  );
}

function longestLine(text: string): number {
  return Math.max(0, ...text.split('\n').map((line) => stringWidth(line)));
}

/**
 * Narrows the widest shown column that can still wrap, one column at a time, until all
 * fit in `room` or every column is at its longest word.
 */
function shrink(shown: number[], natural: number[], floors: number[], room: number): number[] {
  const widths = [...natural];
  const sum = () => shown.reduce((total, column) => total + (widths[column] ?? 0), 0);
  while (sum() > room) {
    const narrowable = shown.filter((column) => (widths[column] ?? 0) > (floors[column] ?? 0));
    if (narrowable.length === 0) break;
    const widest = narrowable.reduce((best, column) =>
      (widths[column] ?? 0) > (widths[best] ?? 0) ? column : best,
    );
    widths[widest] = (widths[widest] ?? 0) - 1;
  }
  return widths;
}

import { describe, expect, test } from 'vitest';
import { fitTable } from '../../cli/render/fit-table.js';
import { widestLine } from '../helpers/terminal-process.js';

const head = ['run', 'status', 'params', 'started'];
const rows = [
  ['01M8SCDQV91R', 'succeeded', 'lr=0.1 note="a fairly long note about what this tries"', '2026-12-01 18:01'],
  ['01M8SCDQGNZY', 'failed', 'lr=0.2', '2026-12-01 18:02'],
];

describe('fitTable', () => {
  test.each([
    ['a pipe: every row on one line', Infinity, { wrapped: false, dropped: null }],
    ['a wide terminal: as wide as the cells', 120, { wrapped: false, dropped: null }],
    ['70 columns: the params wrap at spaces', 70, { wrapped: true, dropped: null }],
    ['40 columns: started is left out, and said so', 40, { wrapped: true, dropped: 'started' }],
  ])('%s', (_case, width, expected) => {
    const text = fitTable({ head, rows, width, droppable: ['started'] });
    expect(widestLine(text), text).toBeLessThanOrEqual(width);
    const lines = text.split('\n');
    const note = lines.at(-1)?.startsWith('(') ? lines.pop() : undefined;
    expect(lines.length > rows.length + 1, text).toBe(expected.wrapped);
    expect(note ?? null).toBe(expected.dropped && `(too narrow for: ${expected.dropped})`);
    for (const row of rows) expect(text).toContain(row[0]);
  });

  test('a word no arrangement can fit is cut with an ellipsis rather than run past the edge', () => {
    const text = fitTable({ head: ['name', 'path'], rows: [['x', 'a'.repeat(80)]], width: 30 });
    expect(widestLine(text)).toBeLessThanOrEqual(30);
    expect(text).toContain('…');
  });

  test('no line ends in spaces and no box is drawn', () => {
    const text = fitTable({ head, rows, width: 70 });
    for (const line of text.split('\n')) expect(line).toBe(line.trimEnd());
    expect(text).not.toMatch(/[│┌└─┼]/);
  });
});

import { expect, test } from 'vitest';
import { LogTail } from '../../runner/output/log-tail.js';

function tailOf(lines: string[], options: ConstructorParameters<typeof LogTail>[0] = {}): string {
  const tail = new LogTail(options);
  for (const line of lines) tail.push(line);
  return tail.text();
}

test.each([
  { lines: [], options: {}, text: '' },
  { lines: ['a', 'b'], options: {}, text: 'a\nb\n' },
  {
    lines: ['1', '2', '3', '4', '5'],
    options: { maxLines: 3 },
    text: '[fluksio: 2 earlier lines not shown]\n3\n4\n5\n',
  },
  {
    lines: ['aaaa', 'bbbb', 'cccc'],
    options: { maxBytes: 10 },
    text: '[fluksio: 1 earlier lines not shown]\nbbbb\ncccc\n',
  },
  {
    lines: ['old', 'x'.repeat(20)],
    options: { maxBytes: 10 },
    text: '[fluksio: 1 earlier lines not shown]\nxxxxxxxxx\n',
  },
  { lines: ['€€€€'], options: { maxBytes: 8 }, text: '€€\n' },
])('$lines within $options', ({ lines, options, text }) => {
  expect(tailOf(lines, options)).toBe(text);
});

test('by default the newest 200 lines are kept', () => {
  const lines = Array.from({ length: 250 }, (_, i) => `line ${i}`);
  const text = tailOf(lines);
  expect(text.startsWith('[fluksio: 50 earlier lines not shown]\nline 50\n')).toBe(true);
  expect(text.endsWith('line 249\n')).toBe(true);
});

test('by default the tail holds at most 64 KiB of lines', () => {
  const text = tailOf(Array.from({ length: 100 }, () => 'x'.repeat(1023)));
  const kept = text.split('\n').slice(1).join('\n');
  expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(64 * 1024);
  expect(text.startsWith('[fluksio: 36 earlier lines not shown]\n')).toBe(true);
});

test('bounds that cannot hold a line are refused', () => {
  expect(() => new LogTail({ maxLines: 0 })).toThrow('maxLines must be a positive integer, got 0');
  expect(() => new LogTail({ maxBytes: 2 })).toThrow('maxBytes must be an integer of at least 5, got 2');
});

import { describe, expect, test } from 'vitest';
import { LineSplitter, MAX_LINE_BYTES } from '../../runner/line-splitter.js';

function split(chunks: (string | Buffer)[], maxLineBytes?: number): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), maxLineBytes ? { maxLineBytes } : {});
  for (const chunk of chunks) splitter.push(Buffer.from(chunk));
  splitter.end();
  return lines;
}

/** Every way of cutting the bytes in two. */
function cutsOf(text: string): Buffer[][] {
  const bytes = Buffer.from(text);
  return Array.from({ length: bytes.length + 1 }, (_, at) => [bytes.subarray(0, at), bytes.subarray(at)]);
}

describe('LineSplitter', () => {
  test.each([
    { chunks: ['a\nb\n'], lines: ['a', 'b'] },
    { chunks: ['a\r\nb\r\n'], lines: ['a', 'b'] },
    { chunks: ['ab', 'c\nd'], lines: ['abc', 'd'] },
    { chunks: ['a\r', '\nb\r', '\n'], lines: ['a', 'b'] },
    { chunks: ['\n\n'], lines: ['', ''] },
    { chunks: ['no newline at the end'], lines: ['no newline at the end'] },
    { chunks: ['a\rb\n'], lines: ['a\r', 'b'] },
    { chunks: ['\r 10%', '\r 20%', '\r100%\n'], lines: [' 10%\r', ' 20%\r', '100%'] },
    { chunks: ['\r 10%\r 20%\r', '\n'], lines: [' 10%\r', ' 20%'] },
    { chunks: [], lines: [] },
  ])('$chunks → $lines', ({ chunks, lines }) => {
    expect(split(chunks)).toEqual(lines);
  });

  test('a NUL byte, which PostgreSQL text cannot hold, arrives as U+FFFD', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    splitter.push(Buffer.from('a\u0000b\n\u0000'));
    splitter.end();
    expect(lines).toEqual(['a\uFFFDb', '\uFFFD']);
  });

  test('a multi-byte character cut between two chunks is decoded whole', () => {
    for (const chunks of cutsOf('héllo € 𝔘 ✓\nnext\n')) {
      expect(split(chunks)).toEqual(['héllo € 𝔘 ✓', 'next']);
    }
  });

  test('a line longer than the limit arrives in pieces of at most the limit', () => {
    expect(split(['abcdefghijklmnopqrst\nend\n'], 8)).toEqual(['abcdefgh', 'ijklmnop', 'qrst', 'end']);
  });

  test('pieces of a long line never cut a character', () => {
    const pieces = split(['€€€€€€€€\n'], 8);
    expect(pieces.join('')).toBe('€€€€€€€€');
    for (const piece of pieces) expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(8);
  });

  test('a stage printing megabytes without a newline is delivered before it ends, 1 MiB at a time', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((line) => lines.push(line));
    const chunk = Buffer.alloc(64 * 1024, 'x');
    for (let i = 0; i < 48; i++) splitter.push(chunk);
    expect(lines.map((line) => line.length)).toEqual([MAX_LINE_BYTES, MAX_LINE_BYTES]);
    splitter.push(Buffer.from('tail\n'));
    expect(lines.map((line) => line.length)).toEqual([MAX_LINE_BYTES, MAX_LINE_BYTES, MAX_LINE_BYTES, 4]);
  });
});

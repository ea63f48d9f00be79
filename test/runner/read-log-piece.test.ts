import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { logPieceOf, readLiveLogPiece } from '../../local/read-log-piece.js';
import { logText } from '../../runner/output/log-text.js';

const log = Buffer.from(logText(['one', 'bar 10%\r', 'bar 100%', 'two', 'last\r']));

test.each([
  {
    position: 0,
    maxLines: 10,
    complete: true,
    lines: ['one', 'bar 10%\rbar 100%', 'two', 'last\r'],
    atEnd: true,
  },
  { position: 0, maxLines: 10, complete: false, lines: ['one', 'bar 10%\rbar 100%', 'two'], atEnd: true },
  { position: 0, maxLines: 2, complete: true, lines: ['one', 'bar 10%\rbar 100%'], atEnd: false },
  { position: 4, maxLines: 1, complete: true, lines: ['bar 10%\rbar 100%'], atEnd: false },
])(
  'a piece from byte $position, at most $maxLines lines, complete: $complete',
  ({ position, maxLines, complete, lines, atEnd }) => {
    const piece = logPieceOf(log, position, maxLines, complete);
    expect(piece.lines).toEqual(lines);
    expect(piece.atEnd).toBe(atEnd);
    // The next piece starts where this one stopped: together they are the whole log.
    const rest = logPieceOf(log, piece.next, 100, true);
    expect(logText([...piece.lines, ...rest.lines])).toBe(log.subarray(position).toString());
  },
);

test('a live file is read from a byte offset; a line still being written waits, a missing file is empty', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fluksio-live-piece-'));
  try {
    const file = join(dir, 'train.log');
    expect(await readLiveLogPiece(file, 0, 100)).toEqual({ lines: [], next: 0, atEnd: true });
    await writeFile(file, 'first\nsecond\nthi');
    const piece = await readLiveLogPiece(file, 0, 100);
    expect(piece).toEqual({ lines: ['first', 'second'], next: 13, atEnd: true });
    await writeFile(file, 'first\nsecond\nthird\n');
    expect(await readLiveLogPiece(file, piece.next, 100)).toEqual({
      lines: ['third'],
      next: 19,
      atEnd: true,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

import { open } from 'node:fs/promises';

/** Bytes read at most per piece: more than the longest line a stage logs (1 MiB pieces). */
const MAX_BYTES = 4 << 20;

/** Lines of a log from a byte offset, with the offset after them. */
export interface LogPiece {
  lines: string[];
  next: number;
  /** Nothing more is in the bytes read from (a live file may still grow). */
  atEnd: boolean;
}

/**
 * Up to `maxLines` whole lines of `bytes` from byte `position`. A last line without its
 * newline is taken only when `complete` (the stored log of a finished stage, whose last
 * line may end in a lone `\r`); in a live file it waits for the rest.
 */
export function logPieceOf(bytes: Buffer, position: number, maxLines: number, complete: boolean): LogPiece {
  const lines: string[] = [];
  let at = Math.min(position, bytes.length);
  while (lines.length < maxLines && at < bytes.length) {
    const end = bytes.indexOf(10, at);
    if (end === -1) {
      if (!complete) break;
      lines.push(bytes.toString('utf8', at));
      at = bytes.length;
      break;
    }
    lines.push(bytes.toString('utf8', at, end));
    at = end + 1;
  }
  return { lines, next: at, atEnd: at >= bytes.length || (!complete && bytes.indexOf(10, at) === -1) };
}

/**
 * A piece of a live log file from byte `position` (at most 4 MiB read); an empty piece at
 * its end, or when the file is not there (not written yet, or removed once stored).
 */
export async function readLiveLogPiece(file: string, position: number, maxLines: number): Promise<LogPiece> {
  const handle = await open(file, 'r').catch(() => null);
  if (!handle) return { lines: [], next: position, atEnd: true };
  try {
    const total = (await handle.stat()).size;
    const buffer = Buffer.alloc(Math.max(0, Math.min(MAX_BYTES, total - position)));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    const piece = logPieceOf(buffer.subarray(0, bytesRead), 0, maxLines, false);
    return {
      lines: piece.lines,
      next: position + piece.next,
      atEnd: piece.atEnd && position + bytesRead >= total,
    };
  } finally {
    await handle.close();
  }
}

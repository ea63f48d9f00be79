import { StringDecoder } from 'node:string_decoder';

/** A stage may print a line of any length; past this many bytes it arrives in pieces. */
export const MAX_LINE_BYTES = 1024 * 1024;

export interface LineSplitterOptions {
  /**
   * The longest line held in memory, in UTF-8 bytes; a longer line is delivered in
   * pieces of at most this size.
   * @defaultValue {@link MAX_LINE_BYTES}
   */
  maxLineBytes?: number;
}

/**
 * Turns the chunks of a byte stream into complete lines. Chunks may split a line or a
 * multi-byte character anywhere; lines end in `\n` or `\r\n` (the ending is not part
 * of the line), and a last line without an ending is delivered by `end()`. A lone `\r`
 * (a tqdm bar's redraw) ends a line too, kept at its end: the text before it is delivered
 * as soon as the next segment begins, so a progress bar is seen while it runs, and
 * joining such lines without a newline gives back the bytes printed. A line
 * longer than `maxLineBytes` is delivered in pieces so that a stage printing megabytes
 * without a newline (a progress bar redrawn with `\r`, a binary blob) cannot exhaust
 * memory. A NUL byte, which no PostgreSQL text can hold, arrives as U+FFFD (�), as
 * undecodable bytes do, so a stage printing binary data cannot make its log unstorable.
 */
export class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private readonly maxLineBytes: number;
  private pending = '';
  private pendingBytes = 0;

  constructor(
    /** Each line; `continues` is true for a piece of a longer line whose text goes on in the next. */
    private readonly onLine: (line: string, continues: boolean) => void,
    options: LineSplitterOptions = {},
  ) {
    this.maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;
    if (!Number.isInteger(this.maxLineBytes) || this.maxLineBytes < 4) {
      // Four bytes is the longest UTF-8 character: a piece must hold at least one.
      throw new Error(`maxLineBytes must be an integer of at least 4, got ${this.maxLineBytes}`);
    }
  }

  /** Feeds the next chunk of the stream. */
  push(chunk: Buffer): void {
    const parts = withoutNul(this.decoder.write(chunk)).split('\n');
    const last = parts.pop() ?? '';
    for (const part of parts) {
      const segments = carriageReturnSegments(stripCarriageReturn(this.pending + part));
      this.pending = '';
      this.pendingBytes = 0;
      for (const line of segments)
        this.onLine(Buffer.byteLength(line) > this.maxLineBytes ? this.deliverPieces(line) : line, false);
    }
    this.pending += last;
    this.pendingBytes += Buffer.byteLength(last);
    if (this.pending.indexOf('\r') >= 0 && this.pending.indexOf('\r') < this.pending.length - 1) {
      // A progress bar redrawn with `\r` reaches the log as it is drawn, each state one
      // line ending in `\r`; the last segment waits (a `\r` at the very end may be a `\r\n`).
      const trailing = this.pending.endsWith('\r');
      const segments = carriageReturnSegments(trailing ? this.pending.slice(0, -1) : this.pending);
      this.pending = (segments.pop() ?? '') + (trailing ? '\r' : '');
      this.pendingBytes = Buffer.byteLength(this.pending);
      for (const line of segments)
        this.onLine(Buffer.byteLength(line) > this.maxLineBytes ? this.deliverPieces(line) : line, false);
    }
    if (this.pendingBytes > this.maxLineBytes) {
      // The rest keeps the last character, so a `\r` of a `\r\n` split by the cut stays pending.
      this.pending = this.deliverPieces(this.pending);
      this.pendingBytes = Buffer.byteLength(this.pending);
    }
  }

  /** Ends the stream: delivers the last line when it had no line ending. */
  end(): void {
    const line = this.pending + withoutNul(this.decoder.end());
    this.pending = '';
    this.pendingBytes = 0;
    if (line === '') return;
    this.onLine(Buffer.byteLength(line) > this.maxLineBytes ? this.deliverPieces(line) : line, false);
  }

  /**
   * Delivers full pieces of the text, never cutting a character, and returns the rest:
   * at most `maxLineBytes` and not empty.
   */
  private deliverPieces(text: string): string {
    const bytes = Buffer.from(text);
    let start = 0;
    while (bytes.length - start > this.maxLineBytes) {
      let cut = start + this.maxLineBytes;
      // Back up to the first byte of a character.
      while ((bytes[cut]! & 0xc0) === 0x80) cut--;
      this.onLine(bytes.toString('utf8', start, cut), true);
      start = cut;
    }
    return bytes.toString('utf8', start);
  }
}

/**
 * A line cut after each lone `\r`, every segment but the last keeping its `\r` (the next
 * one overwrites it, as on a terminal); a bare `\r` segment is dropped.
 */
function carriageReturnSegments(line: string): string[] {
  if (!line.includes('\r')) return [line];
  const parts = line.split('\r');
  const last = parts.pop()!;
  return [...parts.filter((part) => part !== '').map((part) => `${part}\r`), last];
}

function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

function withoutNul(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

export interface LogTailOptions {
  /**
   * The most lines kept.
   * @defaultValue 200
   */
  maxLines?: number;
  /**
   * The most UTF-8 bytes kept, counting one newline per line (the marker line about
   * dropped lines comes on top).
   * @defaultValue 65536
   */
  maxBytes?: number;
}

/**
 * The newest lines of a stage's output, bounded in lines and bytes: what a stage
 * record and a failed check run show (DESIGN §8) without holding the whole log.
 * When older lines had to go, `text()` starts with a line saying how many.
 */
export class LogTail {
  private readonly maxLines: number;
  private readonly maxBytes: number;
  /** Each kept line with its size in bytes, its newline included. */
  private readonly lines: { line: string; bytes: number }[] = [];
  private bytes = 0;
  private dropped = 0;

  constructor(options: LogTailOptions = {}) {
    this.maxLines = options.maxLines ?? 200;
    this.maxBytes = options.maxBytes ?? 64 * 1024;
    if (!Number.isInteger(this.maxLines) || this.maxLines < 1) {
      throw new Error(`maxLines must be a positive integer, got ${this.maxLines}`);
    }
    if (!Number.isInteger(this.maxBytes) || this.maxBytes < 5) {
      // Five bytes hold one newline and the longest UTF-8 character.
      throw new Error(`maxBytes must be an integer of at least 5, got ${this.maxBytes}`);
    }
  }

  /** Adds the newest line, dropping the oldest ones beyond the bounds. */
  push(line: string): void {
    const kept = Buffer.byteLength(line) < this.maxBytes ? line : lastBytes(line, this.maxBytes - 1);
    const bytes = Buffer.byteLength(kept) + 1;
    this.lines.push({ line: kept, bytes });
    this.bytes += bytes;
    while (this.lines.length > this.maxLines || this.bytes > this.maxBytes) {
      this.bytes -= this.lines.shift()!.bytes;
      this.dropped++;
    }
  }

  /** The kept lines, oldest first, without the marker. */
  keptLines(): string[] {
    return this.lines.map(({ line }) => line);
  }

  /** The kept lines, each ending in a newline, after the marker when lines were dropped. */
  text(): string {
    const marker = this.dropped > 0 ? `[fluksio: ${this.dropped} earlier lines not shown]\n` : '';
    return marker + this.lines.map(({ line }) => `${line}\n`).join('');
  }
}

/**
 * The end of a line that alone exceeds the byte bound (the end of a log is what
 * explains a failure), cut at a character boundary.
 */
function lastBytes(line: string, room: number): string {
  const bytes = Buffer.from(line);
  let start = bytes.length - room;
  while ((bytes[start]! & 0xc0) === 0x80) start++;
  return bytes.toString('utf8', start);
}

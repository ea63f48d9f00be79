import { closeSync, ftruncateSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import type { RunEvent } from '../../schemas/run-event.js';
import type { EventQueue } from '../event-queue.js';

export interface SpooledEventQueueOptions {
  /** The spool: a JSON-lines file of this queue's alone, made when first needed, removed when drained. */
  file: string;
  /** Most bytes (as JSON) of events held in memory; the rest wait in the spool. */
  maxMemoryBytes: number;
  /**
   * Told when the spool refuses an event (a full disk: ENOSPC, a quota): from then on,
   * until a write succeeds again, events wait in memory past the bound. @defaultValue none
   */
  onSpoolRefused?(error: unknown): void;
}

/** How much of the spool one read brings back. */
const READ_CHUNK = 64 * 1024;

/**
 * An EventQueue whose memory is bounded: while the control plane is down for hours, a
 * training loop's log lines and metric points would otherwise pile up in the runner's
 * heap until the OOM killer ends the run. Events fit for memory stay there; once one does
 * not fit, it and every later one are appended to the spool, and they come back in the
 * order written as deliveries drain memory. So the order stays the order emitted, and
 * nothing is dropped: the disk is the bound. The file is written and read synchronously:
 * `push` must keep its place in the order the engine emits, and it only happens while
 * deliveries are failing.
 *
 * A disk that fills up is not the run's fault, and must not cost it its events nor end
 * it: the training goes on, and what it reported arrives once the control plane is back.
 * So a line is only counted once it is whole on disk — a write that fails or falls short
 * (ENOSPC) is cut back off the file (ftruncate) and never read back, and writes and reads
 * go by position, up to the last whole line — and the event it carried, with every one
 * after it, is held in memory instead, past the bound, in order (`held`), said once to
 * `onSpoolRefused`. Each later push first tries to move the held events to disk again, so
 * once space returns the bound holds again. Nothing is thrown into the engine: memory
 * growing while the disk is full is the lesser harm against a run failed or events lost
 * for a log spool, and the runner's log says why.
 */
export class SpooledEventQueue implements EventQueue {
  private readonly memory: { event: RunEvent; bytes: number }[] = [];
  private memoryBytes = 0;
  private fd: number | null = null;
  /** Events in the spool file, each a whole line, before `fileEnd`. */
  private spooled = 0;
  /** Where the last whole line ends: the next one is written there, nothing past it read. */
  private fileEnd = 0;
  /** Where the next line to read back starts in the file, and what was read past it. */
  private readAt = 0;
  private pending = Buffer.alloc(0);
  /** Events the spool refused (a full disk), newer than every one in it, oldest first. */
  private readonly overflow: { event: RunEvent; line: string }[] = [];
  /** Whether the spool refused the last event it was given (told once to onSpoolRefused). */
  private refusing = false;

  constructor(private readonly options: SpooledEventQueueOptions) {
    if (!(options.maxMemoryBytes > 0))
      throw new Error(`maxMemoryBytes must be greater than 0, not ${options.maxMemoryBytes}`);
  }

  get length(): number {
    return this.memory.length + this.spooled + this.overflow.length;
  }

  /** Events waiting in the spool file rather than in memory. */
  get onDisk(): number {
    return this.spooled;
  }

  /** Events past the bound held in memory because the spool refused them (a full disk). */
  get held(): number {
    return this.overflow.length;
  }

  push(event: RunEvent): void {
    const line = `${JSON.stringify(event)}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.spooled === 0 && this.overflow.length === 0 && this.fits(bytes)) {
      this.memory.push({ event, bytes });
      this.memoryBytes += bytes;
      return;
    }
    this.overflow.push({ event, line });
    this.spill();
  }

  peek(count: number): RunEvent[] {
    this.refill();
    return this.memory.slice(0, count).map((entry) => entry.event);
  }

  drop(count: number): void {
    for (const { bytes } of this.memory.splice(0, count)) this.memoryBytes -= bytes;
    this.refill();
  }

  /** One event too large for the bound alone still goes through memory, or nothing would move. */
  private fits(bytes: number): boolean {
    return this.memory.length === 0 || this.memoryBytes + bytes <= this.options.maxMemoryBytes;
  }

  /** Moves the held events to the spool, oldest first, until one is refused. */
  private spill(): void {
    let moved = 0;
    try {
      for (const { line } of this.overflow) {
        this.append(line);
        moved += 1;
      }
      this.refusing = false;
    } catch (error) {
      if (!this.refusing) this.options.onSpoolRefused?.(error);
      this.refusing = true;
    } finally {
      this.overflow.splice(0, moved);
    }
  }

  /** Appends one line whole, or leaves the file as it was and throws. */
  private append(line: string): void {
    const data = Buffer.from(line, 'utf8');
    let written = 0;
    try {
      this.fd ??= openSync(this.options.file, 'w+', 0o600);
      while (written < data.length) {
        const wrote = writeSync(this.fd, data, written, data.length - written, this.fileEnd + written);
        if (wrote === 0) throw new Error(`The event spool ${this.options.file} took no more bytes`);
        written += wrote;
      }
    } catch (error) {
      // A torn line would never be read (reads stop at fileEnd, the next line overwrites
      // it); cut off all the same, so that the file holds whole lines only.
      if (this.fd !== null && written > 0) {
        try {
          ftruncateSync(this.fd, this.fileEnd);
        } catch {
          // Past fileEnd, it is never read.
        }
      }
      throw error;
    }
    this.fileEnd += data.length;
    this.spooled += 1;
  }

  /**
   * Brings spooled events back into memory, oldest first, while they fit, then the held
   * ones once the file is read to its end; removes a drained spool.
   */
  private refill(): void {
    while (this.spooled > 0) {
      const line = this.nextLine();
      const bytes = line.length + 1;
      if (!this.fits(bytes)) {
        this.pending = Buffer.concat([line, Buffer.from('\n'), this.pending]);
        this.readAt -= bytes;
        return;
      }
      this.memory.push({ event: JSON.parse(line.toString('utf8')) as RunEvent, bytes });
      this.memoryBytes += bytes;
      this.spooled -= 1;
    }
    if (this.fd !== null) {
      ftruncateSync(this.fd);
      closeSync(this.fd);
      rmSync(this.options.file, { force: true });
      this.fd = null;
      this.fileEnd = 0;
      this.readAt = 0;
      this.pending = Buffer.alloc(0);
    }
    let taken = 0;
    for (const { event, line } of this.overflow) {
      const bytes = Buffer.byteLength(line);
      if (!this.fits(bytes)) break;
      this.memory.push({ event, bytes });
      this.memoryBytes += bytes;
      taken += 1;
    }
    this.overflow.splice(0, taken);
  }

  private nextLine(): Buffer {
    const fd = this.fd;
    if (fd === null) throw new Error(`The event spool ${this.options.file} is not open`);
    for (;;) {
      const end = this.pending.indexOf(10);
      if (end >= 0) {
        const line = this.pending.subarray(0, end);
        this.pending = this.pending.subarray(end + 1);
        this.readAt += end + 1;
        return line;
      }
      const from = this.readAt + this.pending.length;
      const size = Math.min(READ_CHUNK, this.fileEnd - from);
      const chunk = Buffer.alloc(Math.max(size, 0));
      const read = size > 0 ? readSync(fd, chunk, 0, size, from) : 0;
      if (read === 0) throw new Error(`The event spool ${this.options.file} ends before its last event`);
      this.pending = Buffer.concat([this.pending, chunk.subarray(0, read)]);
    }
  }
}

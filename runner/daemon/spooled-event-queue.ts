import { closeSync, ftruncateSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import type { RunEvent } from '../../schemas/run-event.js';
import type { EventQueue } from '../event-queue.js';

export interface SpooledEventQueueOptions {
  /** The spool: a JSON-lines file of this queue's alone, made when first needed, removed when drained. */
  file: string;
  /** Most bytes (as JSON) of events held in memory; the rest wait in the spool. */
  maxMemoryBytes: number;
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
 */
export class SpooledEventQueue implements EventQueue {
  private readonly memory: { event: RunEvent; bytes: number }[] = [];
  private memoryBytes = 0;
  private fd: number | null = null;
  private spooled = 0;
  /** Where the next line to read back starts in the file, and what was read past it. */
  private readAt = 0;
  private pending = Buffer.alloc(0);

  constructor(private readonly options: SpooledEventQueueOptions) {
    if (!(options.maxMemoryBytes > 0))
      throw new Error(`maxMemoryBytes must be greater than 0, not ${options.maxMemoryBytes}`);
  }

  get length(): number {
    return this.memory.length + this.spooled;
  }

  /** Events waiting in the spool file rather than in memory. */
  get onDisk(): number {
    return this.spooled;
  }

  push(event: RunEvent): void {
    const line = `${JSON.stringify(event)}\n`;
    const bytes = Buffer.byteLength(line);
    if (this.spooled === 0 && this.fits(bytes)) {
      this.memory.push({ event, bytes });
      this.memoryBytes += bytes;
      return;
    }
    this.fd ??= openSync(this.options.file, 'w+', 0o600);
    writeSync(this.fd, line, null, 'utf8');
    this.spooled += 1;
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

  /** Brings spooled events back into memory, oldest first, while they fit; removes a drained spool. */
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
      this.readAt = 0;
      this.pending = Buffer.alloc(0);
    }
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
      const chunk = Buffer.alloc(READ_CHUNK);
      const read = readSync(fd, chunk, 0, READ_CHUNK, this.readAt + this.pending.length);
      if (read === 0) throw new Error(`The event spool ${this.options.file} ends before its last event`);
      this.pending = Buffer.concat([this.pending, chunk.subarray(0, read)]);
    }
  }
}

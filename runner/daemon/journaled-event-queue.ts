import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import type { RunEvent } from '../../schemas/run-event.js';
import type { EventQueue } from '../event-queue.js';

export interface JournaledEventQueueOptions {
  /** The queue events wait in (memory, or a spool): the journal only keeps a copy. */
  queue: EventQueue;
  /** The journal: a JSON-lines file of this attempt's alone (event-journal-dir.ts). */
  file: string;
  /**
   * Told when the journal refuses an event (a full disk): the events from then on are not
   * journaled until every one is acknowledged, so a restart re-runs what they recorded.
   * @defaultValue none
   */
  onJournalRefused?(error: unknown): void;
}

/**
 * An EventQueue that also writes each event, as it is queued, to a journal on the
 * runner's disk, until the control plane acknowledged it: a runner killed hard (kill -9,
 * the OOM killer) takes its unsent events with it — among them a stage's end, whose loss
 * throws the stage's finished work away (its Slurm job is submitted again at the resume).
 * The runner started next sends what the journal holds past what the control plane
 * stored (read-event-journal.ts), so nothing the dead process emitted is lost.
 *
 * A write reaches the kernel at once (a process killed keeps it); a `stage.finished` is
 * also synced, so a machine that reboots while its Slurm jobs run on keeps the stage ends.
 * Once every queued event is acknowledged the journal is emptied: it holds the unsent
 * events only. Appends go through O_APPEND, so they follow that truncation. A write that
 * fails (ENOSPC) is cut back off and journaling pauses until the next truncation; the
 * journal then holds a prefix of the unsent events, which a resume sends all the same.
 */
export class JournaledEventQueue implements EventQueue {
  private fd: number | null = null;
  /** Whether the journal refused an event since it was last emptied. */
  private refused = false;
  private closed = false;

  constructor(private readonly options: JournaledEventQueueOptions) {}

  get length(): number {
    return this.options.queue.length;
  }

  push(event: RunEvent): void {
    if (!this.refused && !this.closed) this.journal(event);
    this.options.queue.push(event);
  }

  peek(count: number): RunEvent[] {
    return this.options.queue.peek(count);
  }

  drop(count: number): void {
    this.options.queue.drop(count);
    if (this.options.queue.length > 0 || this.fd === null) return;
    try {
      ftruncateSync(this.fd, 0);
      this.refused = false;
    } catch {
      // What is left is acknowledged events, which a resume skips.
    }
  }

  /** Closes the journal for good (the attempt is over here); the file is the caller's to remove. */
  close(): void {
    this.closed = true;
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private journal(event: RunEvent): void {
    const data = Buffer.from(`${JSON.stringify(event)}\n`, 'utf8');
    let size: number | null = null;
    try {
      if (this.fd === null) {
        this.fd = openSync(this.options.file, 'a+', 0o600);
        endTornLine(this.fd);
      }
      size = fstatSync(this.fd).size;
      for (let written = 0; written < data.length;) {
        const wrote = writeSync(this.fd, data, written, data.length - written);
        if (wrote === 0) throw new Error(`The event journal ${this.options.file} took no more bytes`);
        written += wrote;
      }
      if (event.type === 'stage.finished') fsyncSync(this.fd);
    } catch (error) {
      if (this.fd !== null && size !== null) {
        try {
          ftruncateSync(this.fd, size);
        } catch {
          // A torn last line is skipped when the journal is read.
        }
      }
      this.refused = true;
      this.options.onJournalRefused?.(error);
    }
  }
}

/**
 * Ends the journal's last line when a process killed mid-write left it torn (a resumed
 * attempt appends to its journal): else the first event appended would join it, and the
 * line, unreadable, would leave a gap that stops the next resume's read there.
 */
function endTornLine(fd: number): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const last = Buffer.alloc(1);
  if (readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a) writeSync(fd, '\n');
}

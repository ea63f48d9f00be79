import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { RunEvent } from '../../schemas/run-event.js';

/**
 * The events a journal (journaled-event-queue.ts) holds that the control plane has not
 * stored: from `nextSeq` (the resume's answer) on, in order, each once, up to the first
 * one missing — a line the journal could not take whole (a full disk, a kill mid-write) is
 * skipped, and the events after a gap are not sent: the attempt's seqs must follow on. An
 * attempt's journal that is missing (the process died before it wrote one) holds none; one
 * that cannot be read is passed to `onUnreadable`, and the events read before the error are kept.
 */
export async function readEventJournal(
  file: string,
  nextSeq: number,
  onUnreadable: (error: unknown) => void,
): Promise<RunEvent[]> {
  const bySeq = new Map<number, RunEvent>();
  try {
    // Line by line: a long outage's journal may be larger than one string can hold.
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      const event = parseLine(line);
      if (event && event.seq >= nextSeq && !bySeq.has(event.seq)) bySeq.set(event.seq, event);
    }
  } catch (error) {
    // Missing: the process died before it journaled anything. Unreadable: the stages it
    // records run again, as they would without a journal, rather than the attempt failing.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') onUnreadable(error);
  }
  const unsent: RunEvent[] = [];
  for (let seq = nextSeq, event = bySeq.get(seq); event; event = bySeq.get(++seq)) unsent.push(event);
  return unsent;
}

function parseLine(line: string): RunEvent | null {
  if (line === '') return null;
  try {
    const parsed = RunEvent.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

import { readFile } from 'node:fs/promises';
import { RunEvent } from '../../schemas/run-event.js';

/**
 * The events a journal (journaled-event-queue.ts) holds that the control plane has not
 * stored: from `nextSeq` (the resume's answer) on, in order, each once, up to the first
 * one missing — a line the journal could not take whole (a full disk, a kill mid-write) is
 * skipped, and the events after a gap are not sent: the attempt's seqs must follow on. An
 * attempt's journal that is missing (the process died before it wrote one) holds none.
 */
export async function readEventJournal(file: string, nextSeq: number): Promise<RunEvent[]> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return '';
    throw error;
  });
  const bySeq = new Map<number, RunEvent>();
  for (const line of text.split('\n')) {
    const event = parseLine(line);
    if (event && event.seq >= nextSeq && !bySeq.has(event.seq)) bySeq.set(event.seq, event);
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

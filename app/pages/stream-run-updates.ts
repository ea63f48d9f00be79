import type { ServerResponse } from 'node:http';
import type { RunPageData } from '../../schemas/page-data.js';
import { EventStream } from './event-stream.js';
import { formatStepsHeld } from './parse-steps-held.js';
import type { RunChangeTicket, RunChanges } from './run-changes.js';

/**
 * Streams a running run's page as server-sent events: an `update` each time the run
 * changed — its state, and only the points past those the page holds (`held`, name → last
 * step), to append — whose id is what the page then holds, so an EventSource that
 * reconnects resends it as Last-Event-ID and gets only what it lacks; an `end` once the
 * run is over. Between reads it waits for the run's next change (`changes`), or `pollMs`
 * at most. A change a partial update cannot carry (a baseline fixed, a stage restored
 * from the cache), or points appended past twice the chart's width, send the whole page
 * again, cut down to `buckets`, so the page never holds more than a few widths of points.
 */
export async function streamRunUpdates({
  response,
  runId,
  held: heldAtStart,
  buckets,
  read,
  readWhole,
  changes,
  pollMs,
  signal,
  onError,
}: {
  response: ServerResponse;
  runId: string;
  held: ReadonlyMap<string, number>;
  buckets: number;
  read: (held: ReadonlyMap<string, number>) => Promise<RunPageData | null>;
  readWhole: () => Promise<RunPageData | null>;
  changes: RunChanges;
  pollMs: number;
  signal: AbortSignal;
  onError: (error: unknown) => void;
}): Promise<void> {
  const stream = new EventStream(response, signal);
  const held = new Map(heldAtStart);
  /** Points appended per series since the page last had it whole (cut down). */
  const appended = new Map<string, number>();
  let known = null as { shape: string; whole: string } | null;
  let ticket: RunChangeTicket | null = null;
  try {
    while (!stream.stopped.aborted) {
      // Taken before the read: a change while reading wakes the wait that follows.
      ticket = changes.take(runId);
      // A page that holds nothing gets the page cut down, not every point of the run.
      let data = known === null && held.size === 0 ? await readWhole() : await read(held);
      if (data === null) {
        ticket.cancel();
        await stream.send('end', JSON.stringify({ missing: true }));
        break;
      }
      // What a partial update cannot carry: the baseline's series, a cached stage's points.
      const whole = JSON.stringify([
        data.report.baseline?.id ?? null,
        data.report.stages.map((stage) => stage.cachedFrom),
      ]);
      const crowded = [...appended.values()].some((count) => count > 2 * buckets);
      if ((known !== null && whole !== known.whole) || crowded) {
        data = (await readWhole()) ?? data;
        appended.clear();
      }
      for (const [name, series] of Object.entries(data.series)) {
        const last = series.points.at(-1);
        if (!last) continue;
        held.set(name, last.step);
        if (data.partial) appended.set(name, (appended.get(name) ?? 0) + series.points.length);
      }
      const shape = JSON.stringify({ ...data, series: null, baselineSeries: null, partial: null });
      const fresh = !data.partial || Object.values(data.series).some((series) => series.points.length > 0);
      if (fresh || shape !== known?.shape) {
        // A client that goes away while the server waits for it ends the wait.
        await stream.send('update', JSON.stringify(data), formatStepsHeld(held));
        if (stream.stopped.aborted) break;
      }
      known = { shape, whole };
      if (data.final) {
        ticket.cancel();
        await stream.send('end', '{}');
        break;
      }
      stream.keepAlive();
      await ticket.wait(pollMs, stream.stopped);
    }
  } catch (error) {
    onError(error);
  } finally {
    ticket?.cancel();
    stream.close();
  }
}

import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { RunEvent } from '../../schemas/run-event.js';
import { BatchingEventSink } from '../../runner/output/batching-event-sink.js';

// The sink's clock is faked: when a batch goes is behaviour here, and fake time makes it exact.
beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse('2026-12-01T00:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

const line = (text: string) => ({ type: 'stage.log' as const, stage: 'train', lines: [text] });

/** A sink that records each batch delivered, with the fake time it went at. */
function recordingSink(options: { maxDelayMs?: number; promptDelayMs?: number } = {}) {
  const batches: { at: number; events: RunEvent[] }[] = [];
  const start = Date.now();
  const sink = new BatchingEventSink({
    ...options,
    deliver: async (events) => {
      batches.push({ at: Date.now() - start, events });
    },
  });
  return { sink, batches };
}

describe('BatchingEventSink', () => {
  test('a line after a quiet spell goes after the prompt delay, not the batching delay', async () => {
    const { sink, batches } = recordingSink({ maxDelayMs: 250, promptDelayMs: 20 });
    sink.emit(line('first'));
    await vi.advanceTimersByTimeAsync(19);
    expect(batches).toHaveLength(0);
    // The rest of the burst, printed meanwhile, travels with it.
    sink.emit(line('second'));
    await vi.advanceTimersByTimeAsync(1);
    expect(batches.map((batch) => batch.events.length)).toEqual([2]);
    expect(batches[0]!.at).toBe(20);
  });

  test('while lines keep coming, a batch starts at most once per batching delay, each line once, in order', async () => {
    const { sink, batches } = recordingSink({ maxDelayMs: 250, promptDelayMs: 20 });
    for (let i = 0; i < 100; i++) {
      sink.emit(line(`line ${i}`));
      await vi.advanceTimersByTimeAsync(10);
    }
    await sink.flush();
    const delivered = batches.flatMap((batch) => batch.events);
    expect(delivered.map((event) => event.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // The first after the quiet start at 20 ms, then one per 250 ms: 20, 270, 520, 770 and the flush at 1000.
    expect(batches.map((batch) => batch.at)).toEqual([20, 270, 520, 770, 1000]);
  });

  test('a line soon after a batch waits until the batching delay since that batch has passed', async () => {
    const { sink, batches } = recordingSink({ maxDelayMs: 250, promptDelayMs: 20 });
    sink.emit(line('a'));
    await vi.advanceTimersByTimeAsync(100);
    sink.emit(line('b'));
    await vi.advanceTimersByTimeAsync(300);
    // 'a' went at 20; 'b', at 100, waits until 20 + 250.
    expect(batches.map((batch) => batch.at)).toEqual([20, 270]);
    sink.emit(line('c'));
    await vi.advanceTimersByTimeAsync(20);
    // 'c' at 400 follows 130 ms of quiet, less than the batching delay: it waits until 270 + 250.
    expect(batches).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(batches.map((batch) => batch.at)).toEqual([20, 270, 520]);
  });

  test('a full batch goes at once', async () => {
    const { sink, batches } = recordingSink({ maxDelayMs: 250 });
    for (let i = 0; i < 500; i++) sink.emit(line(`l${i}`));
    await vi.advanceTimersByTimeAsync(0);
    expect(batches.map((batch) => batch.events.length)).toEqual([500]);
    expect(batches[0]!.at).toBe(0);
  });
});

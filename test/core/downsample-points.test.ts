import { describe, expect, test } from 'vitest';
import { downsamplePoints, pointsInRange } from '../../core/downsample-points.js';

const series = (values: number[], firstStep = 0) =>
  values.map((value, i) => ({ step: firstStep + i, value }));
const steps = (points: readonly { step: number }[]) => points.map((point) => point.step);

describe('downsamplePoints', () => {
  test.each([
    { case: 'empty', values: [], buckets: 4, kept: [] },
    { case: 'one point', values: [5], buckets: 4, kept: [0] },
    {
      case: 'no more than two per bucket',
      values: [1, 2, 3, 4, 5, 6, 7, 8],
      buckets: 4,
      kept: [0, 1, 2, 3, 4, 5, 6, 7],
    },
    { case: 'no buckets: whole', values: [1, 2, 3, 4, 5], buckets: 0, kept: [0, 1, 2, 3, 4] },
    {
      // Ten steps over 0…9 in 2 buckets (0–4.5, 4.5–9): first, each bucket's min and max, last.
      case: 'min and max per bucket, first and last kept',
      values: [5, 9, 1, 4, 4, 4, 0, 7, 8, 3],
      buckets: 2,
      kept: [0, 1, 2, 6, 8, 9],
    },
    {
      // A spike of one step in a flat series survives: its bucket's max.
      case: 'a one-step spike is kept',
      values: [...Array(50).fill(1), 100, ...Array(49).fill(1)],
      buckets: 5,
      kept: [0, 20, 40, 50, 60, 80, 99],
    },
    {
      // A flat bucket keeps its first point once (min and max are the same point).
      case: 'a flat series keeps a point per bucket',
      values: Array(12).fill(2),
      buckets: 3,
      kept: [0, 4, 8, 11],
    },
  ])('$case', ({ values, buckets, kept }) => {
    expect(steps(downsamplePoints(series(values), buckets))).toEqual(kept);
  });

  test('buckets follow steps, not indexes: sparse steps fall in their own range', () => {
    const points = [0, 1, 2, 3, 4, 5, 1000].map((step) => ({ step, value: step % 2 }));
    // Two buckets over 0…1000: 0–499 holds six points (min 0 at step 0, max 1 at step 1), 500–1000 the last.
    expect(steps(downsamplePoints(points, 2))).toEqual([0, 1, 1000]);
  });

  test('a long series comes down to at most two points per bucket, in step order, its extremes included', () => {
    const values = Array.from({ length: 100_000 }, (_, i) => Math.sin(i / 500) + (i === 73_123 ? 50 : 0));
    const kept = downsamplePoints(series(values, 7), 560);
    expect(kept.length).toBeLessThanOrEqual(2 * 560 + 2);
    expect(kept.length).toBeGreaterThan(560);
    expect(kept[0]).toEqual({ step: 7, value: values[0] });
    expect(kept.at(-1)).toEqual({ step: 100_006, value: values.at(-1) });
    expect(steps(kept)).toEqual([...steps(kept)].sort((a, b) => a - b));
    expect(Math.max(...kept.map((point) => point.value))).toBe(Math.max(...values));
    expect(Math.min(...kept.map((point) => point.value))).toBe(Math.min(...values));
  });

  test('the other fields of a point come along', () => {
    const points = Array.from({ length: 10 }, (_, step) => ({ step, value: step, at: 1000 + step }));
    expect(downsamplePoints(points, 2)[1]).toEqual({ step: 4, value: 4, at: 1004 });
  });

  test.each([
    { values: [1, NaN, 3, 0, 2, 2, 2, 2, 2, 2], kept: [0, 2, 3, 5, 9] },
    { values: [1, 1, 1, 1, 1, NaN, 7, -7, 2, 2], kept: [0, 6, 7, 9] },
  ])('a bucket holding NaN keeps its numbers: $values', ({ values, kept }) => {
    expect(steps(downsamplePoints(series(values), 2))).toEqual(kept);
  });
});

describe('pointsInRange', () => {
  const points = [0, 2, 4, 6, 8].map((step) => ({ step, value: step }));
  test.each([
    { from: 0, to: 8, kept: [0, 2, 4, 6, 8] },
    { from: 2, to: 6, kept: [2, 4, 6] },
    { from: 1, to: 7, kept: [2, 4, 6] },
    { from: 9, to: 20, kept: [] },
    { from: -5, to: -1, kept: [] },
    { from: 6, to: 2, kept: [] },
  ])('$from … $to', ({ from, to, kept }) => {
    expect(steps(pointsInRange(points, from, to))).toEqual(kept);
  });
});

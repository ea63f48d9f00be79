/** A point of a series along its x axis (a metric's step). */
export interface XPoint {
  step: number;
  value: number;
}

/**
 * A series cut down to what a chart `buckets` pixels wide can show, min/max per bucket:
 * the steps from the first to the last are split into `buckets` equal ranges, and each
 * range keeps its points of least and greatest value (at most two), in step order. The
 * first and last points are always kept, and so is every extreme, so a spike of one step
 * is drawn as high as it went. A series of at most `2 × buckets` points, or `buckets`
 * below 1, is returned whole (the same array). The points must be sorted by step.
 */
export function downsamplePoints<P extends XPoint>(points: readonly P[], buckets: number): readonly P[] {
  const count = points.length;
  if (!(buckets >= 1) || count <= 2 * buckets) return points;
  const first = points[0]!.step;
  const span = points[count - 1]!.step - first;
  const kept: P[] = [points[0]!];
  let bucket = -1;
  let low = -1;
  let high = -1;
  const close = (): void => {
    if (bucket < 0) return;
    const a = Math.min(low, high);
    const b = Math.max(low, high);
    if (a !== 0 && a !== count - 1) kept.push(points[a]!);
    if (b !== a && b !== 0 && b !== count - 1) kept.push(points[b]!);
  };
  for (let i = 0; i < count; i++) {
    const point = points[i]!;
    const at = span > 0 ? Math.min(buckets - 1, Math.floor(((point.step - first) / span) * buckets)) : 0;
    if (at !== bucket) {
      close();
      bucket = at;
      low = i;
      high = i;
      continue;
    }
    // A number always beats NaN, and NaN never wins a comparison: a bucket keeps its numbers.
    const lowest = points[low]!.value;
    const highest = points[high]!.value;
    if (point.value < lowest || (Number.isNaN(lowest) && !Number.isNaN(point.value))) low = i;
    if (point.value > highest || (Number.isNaN(highest) && !Number.isNaN(point.value))) high = i;
  }
  close();
  kept.push(points[count - 1]!);
  return kept;
}

/** The points of a step-sorted series whose step lies in `from` … `to` (both included). */
export function pointsInRange<P extends XPoint>(
  points: readonly P[],
  from: number,
  to: number,
): readonly P[] {
  const start = firstAtOrAfter(points, from);
  const end = firstAtOrAfter(points, to, true);
  return start === 0 && end === points.length ? points : points.slice(start, end);
}

/** The index of the first point whose step is ≥ `step` (> with `after`), by binary search. */
function firstAtOrAfter(points: readonly XPoint[], step: number, after = false): number {
  let low = 0;
  let high = points.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    const at = points[middle]!.step;
    if (at < step || (after && at === step)) low = middle + 1;
    else high = middle;
  }
  return low;
}

import type { RunPageData } from '../../schemas/page-data.js';

/**
 * A run page's data for a page that already holds the series up to some step: each
 * series keeps only its points after `after[name]` (whole for a name not listed), and the
 * baseline's series, which do not change, are left out. A live page asks every second:
 * it gets what is new, not a run's hundred thousand points again.
 */
export function pointsAfter(data: RunPageData, after: ReadonlyMap<string, number>): RunPageData {
  const series = Object.fromEntries(
    Object.entries(data.series).map(([name, one]) => {
      const last = after.get(name);
      if (last === undefined) return [name, one];
      const from = one.points.findIndex((point) => point.step > last);
      return [name, { ...one, points: from === -1 ? [] : one.points.slice(from) }];
    }),
  );
  return { ...data, series, baselineSeries: {}, partial: true };
}

/** `loss:120,acc:120` (names URI-encoded) as name → last step held; null for anything else. */
export function parseStepsHeld(text: string): Map<string, number> | null {
  const held = new Map<string, number>();
  for (const part of text.split(',').filter(Boolean)) {
    const cut = part.lastIndexOf(':');
    const step = Number(part.slice(cut + 1));
    if (cut <= 0 || !Number.isSafeInteger(step) || step < 0) return null;
    try {
      held.set(decodeURIComponent(part.slice(0, cut)), step);
    } catch {
      return null;
    }
  }
  return held;
}

import sparkly from 'sparkly';

/** Points drawn at most: a terminal line, and a check-run table cell, stay readable. */
const MAX_POINTS = 40;

/**
 * A series as ▁▂▃▄▅▆▇█ (DESIGN §7), evenly thinned to at most 40 points so a long
 * training curve keeps its shape in one line.
 */
export function sparkline(values: readonly number[]): string {
  if (values.length < 2) return '';
  const step = values.length / MAX_POINTS;
  const thinned =
    values.length <= MAX_POINTS
      ? [...values]
      : Array.from({ length: MAX_POINTS }, (_, i) => values[Math.floor(i * step)] as number);
  return sparkly(thinned);
}

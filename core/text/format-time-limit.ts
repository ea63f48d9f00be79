const UNITS: readonly [suffix: string, ms: number][] = [
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/**
 * A time limit as people write it in fluksio.yml and settings: `6h`, `1h30m`, `90s` →
 * `1m30s`, `1500ms` → `1.5s`; whole days of two or more as `7d`.
 */
export function formatTimeLimit(ms: number): string {
  if (ms >= 2 * 86_400_000 && ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms < 1_000) return `${ms}ms`;
  let rest = Math.round(ms);
  let text = '';
  for (const [suffix, size] of UNITS) {
    if (suffix === 's') {
      if (rest > 0) text += `${Number((rest / size).toFixed(3))}s`;
    } else if (rest >= size) {
      text += `${Math.floor(rest / size)}${suffix}`;
      rest %= size;
    }
  }
  return text;
}

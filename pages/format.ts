/** A duration as people read it: `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 03 min`. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${String(Math.round((ms % 60_000) / 1000)).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** A metric value with up to 6 significant digits. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  if (Number.isInteger(value)) return String(value);
  return Number(value.toPrecision(6)).toString();
}

/** `lr=0.1 seed=2` */
export function formatParams(params: Record<string, unknown>): string {
  return Object.entries(params)
    .map(([name, value]) => `${name}=${String(value)}`)
    .join(' ');
}

/** The first 12 characters of a digest or commit, as `git log --oneline` shows. */
export function short(text: string | null): string {
  if (text === null) return '—';
  return text.replace(/^sha256:/, '').slice(0, 12);
}

import type { ParamValue } from '../../schemas/key-inputs.js';

// How numbers, durations, params and digests read wherever a run is shown: the terminal,
// a check run, a pull-request comment and the action's step summary.

/** `0.42s`, `12.3s`, `4m 05s`, `1h 02m`; `–` for none. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  if (ms < 10_000) return `${(ms / 1000).toFixed(2)}s`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** A number at six significant digits, without trailing zeros; `–` for none. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(6)));
}

/** A change with its sign: `+0.012`, `−3.2%`, `±0`; `–` for none. */
export function formatSigned(value: number | null, suffix = ''): string {
  if (value === null) return '–';
  return `${value > 0 ? '+' : value < 0 ? '−' : '±'}${formatNumber(Math.abs(value))}${suffix}`;
}

/** A change in percent at two decimals, with its sign: `+12.5%`; `–` for none. */
export function formatDeltaPct(deltaPct: number | null): string {
  return deltaPct === null ? '–' : formatSigned(Number(deltaPct.toFixed(2)), '%');
}

/**
 * A param value as it would be typed (DESIGN §4): quoted when it needs to be — a string
 * with a blank, a quote or a comma (which would make it a sweep) among others.
 */
export function formatValue(value: ParamValue): string {
  return typeof value === 'string' && !/^[\w.:/+-]+$/.test(value) ? JSON.stringify(value) : String(value);
}

/** `lr=0.1 epochs=3 note="two words"`: params as they would be typed. */
export function formatParams(params: Readonly<Record<string, ParamValue>>): string {
  return Object.entries(params)
    .map(([key, value]) => `${key}=${formatValue(value)}`)
    .join(' ');
}

/** The first characters of a digest or SHA, enough to recognise it; `–` for none. */
export function short(text: string | null | undefined, length = 12): string {
  return text ? text.replace(/^sha256:/, '').slice(0, length) : '–';
}

/** A size for people: `512 B`, `3.2 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

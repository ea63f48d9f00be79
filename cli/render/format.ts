import type { ParamValue } from '../../schemas/key-inputs.js';

/** `0.42s`, `12.3s`, `4m 05s`, `1h 02m`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  if (ms < 10_000) return `${(ms / 1000).toFixed(2)}s`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** A number at six significant digits, without trailing zeros. */
export function formatNumber(value: number | null | undefined): string {
  if (value === null || value === undefined) return '–';
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(6)));
}

/** A change with its sign: `+0.012`, `−3.2%`. */
export function formatSigned(value: number | null, suffix = ''): string {
  if (value === null) return '–';
  const text = formatNumber(Math.abs(value));
  return `${value > 0 ? '+' : value < 0 ? '−' : '±'}${text}${suffix}`;
}

/** `lr=0.1 epochs=3 note="two words"`: params as they would be typed. */
export function formatParams(params: Readonly<Record<string, ParamValue>>): string {
  return Object.entries(params)
    .map(
      ([key, value]) =>
        `${key}=${typeof value === 'string' && !/^[\w.,:/+-]+$/.test(value) ? JSON.stringify(value) : String(value)}`,
    )
    .join(' ');
}

/** The first characters of a digest or SHA, enough to recognise it. */
export function short(text: string | null | undefined, length = 12): string {
  return text ? text.replace(/^sha256:/, '').slice(0, length) : '–';
}

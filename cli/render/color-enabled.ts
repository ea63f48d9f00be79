import type { CliIo } from '../../present/terminal/cli-io.js';

/**
 * Whether a command colours what it writes to `stream`: never with `NO_COLOR` set
 * (no-color.org), as `FORCE_COLOR` says when set, else only on a terminal that is not dumb.
 */
export function colorEnabled(io: CliIo, stream: { isTTY?: boolean }): boolean {
  if ('NO_COLOR' in io.env && io.env.NO_COLOR !== '') return false;
  if ('FORCE_COLOR' in io.env) return io.env.FORCE_COLOR !== '0';
  return Boolean(stream.isTTY) && io.env.TERM !== 'dumb';
}

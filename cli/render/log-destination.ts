import type { Writable } from 'node:stream';
import { PinoPretty } from 'pino-pretty';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { colorEnabled } from './color-enabled.js';

/**
 * Where a long-running command's pino log goes: on a terminal, human-readable lines
 * (time, level, message, the fields after it; coloured unless NO_COLOR); anywhere else
 * (a pipe, a file, journald) one JSON object per line, as log collectors expect.
 */
export function logDestination(io: CliIo): Writable {
  if (!io.stdout.isTTY) return io.stdout;
  return PinoPretty({
    destination: io.stdout,
    colorize: colorEnabled(io, io.stdout),
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,name',
    singleLine: true,
    sync: true,
  });
}

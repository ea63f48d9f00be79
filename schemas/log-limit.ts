import { z } from 'zod';

/** What a stage's log keeps unless its pipeline says otherwise: 64 MiB. */
export const DEFAULT_LOG_LIMIT = 64 * 2 ** 20;
/** The most a pipeline may ask a runner and a control plane to keep of one stage's log. */
export const MAX_LOG_LIMIT = 2 ** 30;
/** The least: room for a few screens of output and the line saying the rest was dropped. */
export const MIN_LOG_LIMIT = 1024;

const UNIT_BYTES = { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30 } as const;
const LOG_LIMIT_EXPECTED = 'expected a size like 64MiB, 512KiB or 1GiB, from 1KiB to 1GiB';

/**
 * The most bytes of a stage's log that are kept (`log_limit: 64MiB`), read as bytes:
 * past it the stage keeps running and its plain output is dropped, saying so
 * (runner/output/stage-output.ts). A bad one is quoted in its error.
 */
export const LogLimit = z
  .string()
  .regex(/^\d+(B|KiB|MiB|GiB)$/, {
    error: (issue) => `${JSON.stringify(issue.input)} is not a size: ${LOG_LIMIT_EXPECTED}`,
  })
  .transform((text, context) => {
    const [, amount = '0', unit = 'B'] = /^(\d+)(B|KiB|MiB|GiB)$/.exec(text) ?? [];
    const bytes = Number(amount) * UNIT_BYTES[unit as keyof typeof UNIT_BYTES];
    if (bytes < MIN_LOG_LIMIT || bytes > MAX_LOG_LIMIT) {
      context.issues.push({
        code: 'custom',
        input: text,
        message: `${JSON.stringify(text)}: ${LOG_LIMIT_EXPECTED}`,
      });
      return z.NEVER;
    }
    return bytes;
  });

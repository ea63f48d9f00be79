import { z } from 'zod';

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A duration written `90s`, `30m`, `6h` or `1.5h`, read as milliseconds. */
export const Duration = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h|d)$/, { error: 'expected a duration like "90s", "30m" or "6h"' })
  .transform((text) => {
    const [, amount = '0', unit = 'ms'] = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text) ?? [];
    return Math.round(Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS]);
  })
  .refine((ms) => ms > 0, { error: 'a duration must be longer than zero' });

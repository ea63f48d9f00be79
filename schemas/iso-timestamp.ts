import { z } from 'zod';

/**
 * An instant as `Date.prototype.toISOString()` writes it (`2026-12-01T14:55:00.000Z`, or
 * with an offset), in years 0001–9999 of UTC: the store writes instants in that same form,
 * and PostgreSQL's `timestamptz` reads no year 0000. Any other text is refused at the
 * boundary rather than failing the write that stores it.
 */
export const IsoTimestamp = z.iso
  .datetime({ offset: true, error: 'expected an ISO 8601 date and time, e.g. 2026-12-01T14:55:00.000Z' })
  .refine(
    (text) => {
      const year = new Date(text).getUTCFullYear();
      return year >= 1 && year <= 9999;
    },
    { error: 'expected a year from 0001 to 9999' },
  );
export type IsoTimestamp = z.infer<typeof IsoTimestamp>;

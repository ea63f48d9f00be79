import { z } from 'zod';

/** A run's or a sweep's id in a page's address. */
export const Id = z.string().min(1).max(64);
export const IdParams = z.object({ id: Id });
/** At most this many runs side by side: more curves than anyone can tell apart. */
const MAX_COMPARED = 32;
/** The runs a comparison shows (`?runs=a,b`), each once. */
export const CompareQuery = z
  .object({
    runs: z
      .string()
      .transform((text) => [...new Set(text.split(',').filter(Boolean))])
      .pipe(z.array(Id).min(1).max(MAX_COMPARED)),
  })
  .loose();

import { z } from 'zod';

/**
 * A stage's plot file (or folder of them) read as metric series after the stage ran
 * (DVC's `plots`): one series per `y` column, stepped by the `x` column. Only the
 * fields that decide the series are kept, so they can enter the stage's cache key.
 */
export const PlotSpec = z.strictObject({
  /** Relative to the pipeline file's directory; a folder means every plot file in it. */
  path: z
    .string()
    .min(1, { error: 'expected a path' })
    .refine((path) => !path.startsWith('/'), { error: 'expected a path relative to the pipeline file' }),
  /** The column giving each point's step; by default `step` when there is one, else the row's index. */
  x: z.string().min(1, { error: 'expected a column name' }).optional(),
  /** The columns read as series; by default the last numeric column other than x. */
  y: z
    .array(z.string().min(1, { error: 'expected a column name' }))
    .min(1)
    .optional(),
  /** CSV and TSV: false when the file has no header row (its columns are then named 0, 1, …). */
  header: z.boolean().optional(),
});
export type PlotSpec = z.infer<typeof PlotSpec>;

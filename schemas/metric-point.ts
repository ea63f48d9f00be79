import { z } from 'zod';

/** One point of a metric series streamed by `::metric name=loss::0.25` (DESIGN §7). */
export const MetricPoint = z.strictObject({
  stage: z.string(),
  name: z.string().min(1),
  step: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  value: z.number().refine(Number.isFinite, { error: 'expected a finite number' }),
  /** When the stage printed it, in ms since the epoch: the pages' wall-time axis. Absent from older runners. */
  at: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).optional(),
});
export type MetricPoint = z.infer<typeof MetricPoint>;

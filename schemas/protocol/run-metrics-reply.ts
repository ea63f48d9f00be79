import { z } from 'zod';

/** One streamed metric: the stage of the run that reported it, and its points by ascending step. */
export const MetricSeries = z.object({
  stage: z.string(),
  /** `at`: when the point was printed (ms since the epoch), where the runner said. */
  points: z.array(z.object({ step: z.number(), value: z.number(), at: z.number().optional() })),
});
export type MetricSeries = z.infer<typeof MetricSeries>;

/**
 * `GET /api/v1/runs/:id/metrics` → metric name → its series. A cached stage's series are
 * those of the run that executed it.
 */
export const RunMetricsReply = z.object({ series: z.record(z.string(), MetricSeries) });
export type RunMetricsReply = z.infer<typeof RunMetricsReply>;

import { z } from 'zod';

/**
 * `fluksio runs --sort NAME`: a param, a metric, `status`, `commit`, `id` or `when`;
 * a leading `-` sorts descending (null: the default direction, see selectRuns).
 */
export const RunSort = z
  .string()
  .regex(
    /^-?[^\s<>=!-][^\s<>=!]*$/,
    'expected a param or metric name, - before it for descending (e.g. -accuracy)',
  )
  .transform((text) => ({
    name: text.replace(/^-/, ''),
    descending: text.startsWith('-') ? true : null,
  }));
export type RunSort = z.infer<typeof RunSort>;

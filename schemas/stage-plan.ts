import { z } from 'zod';

/**
 * What `fluksio run` would do with a stage now (`fluksio status`, `fluksio run --dry-run`):
 * `run` it, `restore` its cached result, or, after an upstream stage that runs, restore it
 * only if that stage makes its outputs as before (`depends`).
 */
export const StagePlan = z.strictObject({
  name: z.string(),
  action: z.enum(['run', 'restore', 'depends']),
  /**
   * Why, in the run summary's words: for `run` why it would re-run (`train.py changed`,
   * `lr 0.5 → 0.1`, `--force`); for `depends` which upstream stages decide; empty for `restore`.
   */
  reasons: z.array(z.string()),
  /** The run whose cached result would be restored (`restore`, `depends`); else null. */
  cachedFrom: z.string().nullable(),
  /** The stages upstream of it that would run first (or depend in turn), in the pipeline's order. */
  after: z.array(z.string()),
});
export type StagePlan = z.infer<typeof StagePlan>;

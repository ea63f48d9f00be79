import { z } from 'zod';

/**
 * The stages a run was asked for (`fluksio run train --downstream`), when it ran fewer
 * than all of them: such a run is recorded as partial and is never another run's
 * baseline. A run that ran every stage has none, however it was asked for.
 */
export const StageSelection = z.strictObject({
  /** The stages named on the command line, as written (`train`, `train@small`). */
  named: z.array(z.string().min(1)).min(1),
  /** Whether what depends on them was selected too (`--downstream`). */
  downstream: z.boolean(),
  /** The stages the run executed or restored: the named, what they need, and with `downstream` what depends on them; in the pipeline's order. */
  stages: z.array(z.string().min(1)).min(1),
});
export type StageSelection = z.infer<typeof StageSelection>;

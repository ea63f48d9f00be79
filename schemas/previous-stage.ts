import { z } from 'zod';
import { KeyInputs } from './key-inputs.js';

/**
 * What "why it re-ran" compares a stage's inputs with (DESIGN §5): the key inputs the
 * stage had in the run the user compares with — the previous run of the same pipeline —
 * and that run's id. `GET /api/v1/runs/:id/cache?stage=NAME` answers with it.
 */
export const PreviousStage = z.strictObject({
  runId: z.string(),
  keyInputs: KeyInputs,
});
export type PreviousStage = z.infer<typeof PreviousStage>;

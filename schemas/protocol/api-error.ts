import { z } from 'zod';

/**
 * Every error the control plane answers with (DESIGN §10): a sentence naming what was
 * wrong, where and what is expected, and the field when one input was at fault.
 */
export const ApiError = z.object({
  error: z.string(),
  field: z.string().optional(),
  /** For a failure of the control plane itself (500): the id its log gives the details under. */
  requestId: z.string().optional(),
});
export type ApiError = z.infer<typeof ApiError>;

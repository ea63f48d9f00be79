import { z } from 'zod';

/** `GET /api/v1/runs/:id/logs/:stage` → the stage's whole log, line by line (404 for a stage the run lacks). */
export const StageLogReply = z.object({ stage: z.string(), lines: z.array(z.string()) });
export type StageLogReply = z.infer<typeof StageLogReply>;

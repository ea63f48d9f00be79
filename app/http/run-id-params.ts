import { z } from 'zod';

/** `:id` of a run route. Run ids are ULIDs; any other text is simply no run (404). */
export const RunIdParams = z.object({ id: z.string().min(1).max(64) });

/** The header naming the run a blob request is for. */
export const RunIdHeader = z.string().min(1).max(64);

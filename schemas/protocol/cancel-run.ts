import { z } from 'zod';

/**
 * `POST /api/v1/runs/:id/cancel` → the run's RemoteRunReport: a queued run ends at once, a
 * running one is stopped by its runner as soon as it hears, through its parked watch
 * (run-watch.ts) or at the latest its next heartbeat. Without a reason the run says who
 * cancelled it (the API token's name).
 */
export const CancelRunRequest = z.strictObject({ reason: z.string().min(1).max(1000).optional() });
export type CancelRunRequest = z.infer<typeof CancelRunRequest>;

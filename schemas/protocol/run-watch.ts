import { z } from 'zod';
import { LeaseId } from './lease-id.js';

/**
 * `POST /api/v1/runs/:id/watch` → HeartbeatReply: the runner holding the run waits up to
 * `waitSeconds` for the control plane to ask it to stop (a user's cancel, the run's time
 * limit), and asks again at once after an answer with nothing to do. The lease is the
 * credential, as for a heartbeat; the watch renews nothing (the heartbeat keeps the
 * lease). Long-polls are kept under a minute, which proxies and load balancers let idle.
 */
export const RunWatchRequest = z.strictObject({
  lease: LeaseId,
  waitSeconds: z.number().int().min(0).max(55).default(25),
});
export type RunWatchRequest = z.infer<typeof RunWatchRequest>;

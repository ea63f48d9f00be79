import { z } from 'zod';

/**
 * `GET /healthz` → `{ok: true}`, without a credential: the process answers. A submitter
 * asks it first, so that a URL that is no fluksio control plane is named before anything
 * is submitted to it.
 */
export const HealthReply = z.object({ ok: z.literal(true) });
export type HealthReply = z.infer<typeof HealthReply>;

import { z } from 'zod';
import { RunStatus } from '../statuses.js';

/**
 * `POST /api/v1/runs/:id/start`, `/finish` and `/release` → the run's state once the
 * write is applied (`running`, the state it finished in, or `queued` again).
 */
export const LeasedWriteReply = z.object({ status: RunStatus });
export type LeasedWriteReply = z.infer<typeof LeasedWriteReply>;

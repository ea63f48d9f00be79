import { z } from 'zod';

/** The fencing token of one claim (DESIGN §6): 32 random bytes, hex. */
export const LeaseId = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { error: 'expected the lease id this run was claimed with' });
export type LeaseId = z.infer<typeof LeaseId>;

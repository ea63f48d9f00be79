import { z } from 'zod';

/** A full commit id: 40 hex digits (SHA-1) or 64 (SHA-256), lowercase. */
export const CommitSha = z.string().regex(/^([0-9a-f]{40}|[0-9a-f]{64})$/, {
  error: 'expected a full commit SHA (40 or 64 lowercase hex digits)',
});
export type CommitSha = z.infer<typeof CommitSha>;

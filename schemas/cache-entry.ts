import { z } from 'zod';
import { KeyInputs } from './key-inputs.js';
import { OutRecord } from './out-record.js';

/** Who may read a cache entry: `trusted`, or `pr:<n>` for a fork's pull request (DESIGN §1). */
export const TrustDomain = z.string().regex(/^(trusted|pr:[1-9][0-9]*)$/, {
  error: 'expected "trusted" or "pr:<number>"',
});
export type TrustDomain = z.infer<typeof TrustDomain>;

/**
 * A stage cache entry: what a successful execution of a stage with this key produced.
 * Written only from that stage's own finish event (DESIGN §5).
 */
export const CacheEntry = z.strictObject({
  key: z.string().regex(/^[0-9a-f]{64}$/),
  stage: z.string(),
  /** The run whose execution produced the outputs. */
  runId: z.string(),
  outs: z.array(OutRecord),
  metrics: z.record(z.string(), z.number()),
  keyInputs: KeyInputs,
  createdAt: z.string(),
});
export type CacheEntry = z.infer<typeof CacheEntry>;

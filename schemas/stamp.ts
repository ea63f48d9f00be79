import { z } from 'zod';
import { ParamValue } from './key-inputs.js';

/**
 * What identifies what ran (DESIGN §5): the exact commit, whether the working tree
 * differed from it, the code digest of the pipeline's scope, and digests of the params
 * and of the `env` values.
 */
export const Stamp = z.strictObject({
  /** Null in a repository without commits. */
  commit: z.string().nullable(),
  dirty: z.boolean(),
  codeDigest: z.string(),
  params: z.record(z.string(), ParamValue),
  paramsDigest: z.string(),
  envDigest: z.string(),
});
export type Stamp = z.infer<typeof Stamp>;

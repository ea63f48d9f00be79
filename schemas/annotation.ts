import { z } from 'zod';
import { INT32_MAX } from './int32.js';

/**
 * A message pinned to a line of a repository file: from a traceback, or from a stage's
 * `::error file=…,line=…::` workflow command. `path` is relative to the repository root.
 */
export const Annotation = z.strictObject({
  stage: z.string(),
  path: z.string().nullable(),
  line: z.number().int().positive().max(INT32_MAX).nullable(),
  level: z.enum(['error', 'warning', 'notice']),
  message: z.string(),
  title: z.string().nullable(),
});
export type Annotation = z.infer<typeof Annotation>;

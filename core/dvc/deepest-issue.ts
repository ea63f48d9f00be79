import type { z } from 'zod';

/**
 * The issue to report for a value no branch of a union accepts: the one found deepest
 * in the value (a plot's `x` that is a list, rather than "the entry is neither a path
 * nor a mapping"), its path joined to the union's. An issue of another kind, or a union
 * whose branches all failed at its top, is returned as it is.
 */
export function deepestIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue;
  let best: z.core.$ZodIssue | null = null;
  for (const branch of issue.errors) {
    for (const inner of branch) {
      const found = deepestIssue(inner);
      if (found.path.length > 0 && (best === null || found.path.length > best.path.length)) best = found;
    }
  }
  return best === null ? issue : { ...best, path: [...issue.path, ...best.path] };
}

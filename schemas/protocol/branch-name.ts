import { z } from 'zod';

/** A branch name as git allows it (`main`, `feature/lr`): what runs are filtered by. */
export const BranchName = z
  .string()
  .min(1)
  .max(255)
  .refine((name) => !/[\s~^:?*[\\]|\/\/|\.\.|^\/|\/$/.test(name) && [...name].every((char) => char >= ' '), {
    error: 'expected a branch name as git allows it (e.g. main or feature/lr)',
  });
export type BranchName = z.infer<typeof BranchName>;

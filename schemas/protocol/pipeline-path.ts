import { z } from 'zod';

/** A pipeline file's path inside its repository (`fluksio.yml`, `ml/dvc.yaml`): what runs name. */
export const PipelinePath = z
  .string()
  .min(1)
  .max(500)
  .refine((path) => !path.startsWith('/') && !path.split('/').includes('..'), {
    error: 'expected a path inside the repository',
  });
export type PipelinePath = z.infer<typeof PipelinePath>;

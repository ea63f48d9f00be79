import { z } from 'zod';
import { Duration } from './duration.js';

const UNIT_MIB = { MiB: 1, GiB: 1024, TiB: 1024 * 1024, M: 1, G: 1024, T: 1024 * 1024 } as const;

/** What an amount of memory is written as, for the errors that quote what was written instead. */
const MEMORY_EXPECTED = 'expected a number with a unit like 512MiB, 32GiB';

/**
 * An amount of memory written `512MiB`, `32GiB` or `1.5TiB` (`M`, `G`, `T` too), read as
 * whole MiB. A bad one is quoted in its error: `"32 gigs" is not a size: expected …`.
 */
export const Memory = z
  .string()
  .regex(/^\d+(\.\d+)?(MiB|GiB|TiB|M|G|T)$/, {
    error: (issue) => `${JSON.stringify(issue.input)} is not a size: ${MEMORY_EXPECTED}`,
  })
  .transform((text, context) => {
    const [, amount = '0', unit = 'MiB'] = /^(\d+(?:\.\d+)?)(MiB|GiB|TiB|M|G|T)$/.exec(text) ?? [];
    const mib = Math.ceil(Number(amount) * UNIT_MIB[unit as keyof typeof UNIT_MIB]);
    if (mib <= 0) {
      context.issues.push({
        code: 'custom',
        input: text,
        message: `${JSON.stringify(text)} is no memory at all: ${MEMORY_EXPECTED}, more than zero`,
      });
      return z.NEVER;
    }
    return mib;
  });

/**
 * What a stage asks of a cluster (issue 12): GPUs, CPUs, memory, a time limit and a
 * partition. The Slurm backend maps them to `sbatch` flags; the local and plain backends
 * refuse what they cannot honour or ignore it, saying which (resource-support.ts).
 */
export const Resources = z.strictObject({
  gpus: z.number().int({ error: 'expected a whole number of GPUs' }).min(0).max(1024).optional(),
  cpus: z.number().int({ error: 'expected a whole number of CPUs' }).min(1).max(100_000).optional(),
  /** In MiB. */
  memory: Memory.optional(),
  /** In milliseconds. */
  time: Duration.optional(),
  partition: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected a partition name (letters, digits, _ . -)' })
    .optional(),
});
export type Resources = z.infer<typeof Resources>;

/** A stage's resources: its own fields over the pipeline-wide defaults. */
export function stageResources(defaults: Resources | undefined, own: Resources | undefined): Resources {
  return { ...defaults, ...own };
}

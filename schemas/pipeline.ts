import { z } from 'zod';
import { Duration } from './duration.js';
import { LogLimit } from './log-limit.js';
import { PlotSpec } from './plot-spec.js';
import { Resources } from './resources.js';

/** Names that `${name}` can interpolate and that stages and params are called by. */
const identifier = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
  error: 'expected an identifier: ASCII letters (A-Z, a-z), digits and _, not first a digit',
});

/** A path as the pipeline writes it: relative to the pipeline file's directory. */
const relativePath = z
  .string()
  .min(1, { error: 'expected a path' })
  .refine((path) => !path.startsWith('/'), { error: 'expected a path relative to the pipeline file' });

/** Integers fluksio carries exactly through JSON, YAML and every language a stage is written in. */
const safeInteger = z.number().int({
  error: (issue) =>
    issue.code === 'too_big' || issue.code === 'too_small'
      ? 'expected an integer within ±9007199254740991 (2^53−1)'
      : 'expected an integer',
});

const finite = z.number().refine(Number.isFinite, { error: 'expected a finite number' });

export const FloatParam = z.strictObject({
  type: z.literal('float'),
  default: finite.optional(),
  min: finite.optional(),
  max: finite.optional(),
  enum: z.array(finite).min(1).optional(),
  description: z.string().optional(),
});
export const IntParam = z.strictObject({
  type: z.literal('int'),
  default: safeInteger.optional(),
  min: safeInteger.optional(),
  max: safeInteger.optional(),
  enum: z.array(safeInteger).min(1).optional(),
  description: z.string().optional(),
});
export const StringParam = z.strictObject({
  type: z.literal('string'),
  default: z.string().optional(),
  enum: z.array(z.string()).min(1).optional(),
  description: z.string().optional(),
});
export const BoolParam = z.strictObject({
  type: z.literal('bool'),
  default: z.boolean().optional(),
  enum: z.array(z.boolean()).min(1).optional(),
  description: z.string().optional(),
});

/** A declared parameter: its type, default and allowed values (DESIGN §3). */
export const ParamSpec = z.discriminatedUnion('type', [FloatParam, IntParam, StringParam, BoolParam], {
  error: 'expected a parameter with type float, int, string or bool',
});
export type ParamSpec = z.infer<typeof ParamSpec>;

/** One stage: a command with declared inputs and outputs (DESIGN §3). */
export const Stage = z.strictObject({
  cmd: z.string().min(1, { error: 'expected a command' }),
  /** What the stage does, for people (`fluksio dag`, `fluksio status`); DVC's `desc`. Not in its key. */
  description: z.string().optional(),
  deps: z.array(relativePath).default([]),
  params: z.array(identifier).default([]),
  outs: z.array(relativePath).default([]),
  metrics: z.array(relativePath).default([]),
  /** Plot files (each an out, or inside one) whose columns become metric series once the stage ran. */
  plots: z.array(PlotSpec).optional(),
  /** Globs the stage's code digest covers, or false: its deps are exhaustive. */
  code: z.union([z.literal(false), z.array(z.string().min(1))]).optional(),
  timeout: Duration.optional(),
  /** false: never read from nor written to the stage cache. */
  cache: z.boolean().default(true),
  /** What it asks of a cluster, over the pipeline's `resources` (schemas/resources.ts). */
  resources: Resources.optional(),
  /** The most of its log kept, in bytes, over the pipeline's `log_limit` (schemas/log-limit.ts). */
  log_limit: LogLimit.optional(),
});
export type Stage = z.infer<typeof Stage>;

const branches = z.strictObject({ branches: z.array(z.string().min(1)).min(1) });

/** The `fluksio.yml` file, as its schema alone can check it. */
export const Pipeline = z.strictObject({
  version: z.literal(1, { error: 'expected version: 1' }),
  params: z.record(identifier, ParamSpec).default({}),
  'runs-on': z.array(z.string().regex(/^[A-Za-z0-9_.-]+$/, { error: 'expected a label' })).default([]),
  on: z
    .strictObject({
      push: branches.optional(),
      pull_request: z.union([z.strictObject({}), z.null()]).optional(),
    })
    .default({}),
  code: z.array(z.string().min(1)).optional(),
  env: z
    .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected an environment variable name' }))
    .default([]),
  fingerprint: z.string().min(1).optional(),
  /**
   * A file each stage finds its listed params in, written by fluksio for the run: a name
   * ending in .yaml, .yml or .json, made in the stage's private folder, its path in
   * FLUKSIO_PARAMS_FILE.
   */
  params_file: z
    .string()
    .regex(/^[A-Za-z0-9_.-]+\.(?:ya?ml|json)$/, {
      error:
        "expected a file name ending in .yaml, .yml or .json, with no folder (fluksio writes it in the stage's private folder and gives its path in FLUKSIO_PARAMS_FILE)",
    })
    .optional(),
  /**
   * Set by a `dvc.yaml`'s translation: a stage's listed params, named as DVC names them
   * (`featurize.max_features`, `custom.yaml:lr`), are written with the run's values into
   * their params file in the work tree while the stage runs (as `dvc exp run -S` does),
   * and the file is put back byte for byte after, since DVC stages read `params.yaml`.
   */
  dvc_params: z.literal(true, { error: 'expected true' }).optional(),
  timeout: Duration.default(24 * 3_600_000),
  retries: z.number().int().min(0).max(10).default(0),
  /** Every stage's resources unless it says otherwise. */
  resources: Resources.optional(),
  /** Every stage's log limit unless it says otherwise. @defaultValue DEFAULT_LOG_LIMIT (64 MiB) */
  log_limit: LogLimit.optional(),
  metrics: z.record(z.string().min(1), z.strictObject({ goal: z.enum(['min', 'max']) })).default({}),
  stages: z
    .record(identifier, Stage)
    .refine((stages) => Object.keys(stages).length > 0, { error: 'expected at least one stage' }),
});
export type Pipeline = z.infer<typeof Pipeline>;

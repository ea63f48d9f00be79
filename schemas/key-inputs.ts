import { z } from 'zod';
import { BlobDigest } from './blob-digest.js';
import { PlotSpec } from './plot-spec.js';
import { ReadSet } from './read-set.js';

/** Version of the cache-key recipe. Bump it when what goes into a key changes. */
export const CACHE_KEY_VERSION = 2;

export const ParamValue = z.union([z.number(), z.string(), z.boolean()]);
export type ParamValue = z.infer<typeof ParamValue>;

/** A program a stage's command starts, as it enters the key (see `commandInterpreters`). */
export const Interpreter = z.strictObject({
  /** The file PATH leads to, symlinks followed. */
  path: z.string(),
  /** `sha256:<hex>` of its bytes. */
  digest: z.string(),
});
export type Interpreter = z.infer<typeof Interpreter>;

/**
 * Everything a stage's result depends on (DESIGN §5). The cache key is the sha256 of
 * its canonical JSON; it is also stored with each cache entry so that a miss can say
 * which of these changed ("why it re-ran"). Stage name and run id are deliberately absent.
 */
export const KeyInputs = z.strictObject({
  version: z.literal(CACHE_KEY_VERSION),
  /** The command as the pipeline writes it, before interpolation: tells a command edit from a param change. */
  template: z.string(),
  /** The command after interpolation. */
  cmd: z.string(),
  /** Each dep's path → content digest (a directory: a digest over its files). */
  deps: z.record(z.string(), z.string()),
  /** The values of the params the stage lists. */
  params: z.record(z.string(), ParamValue),
  outs: z.array(z.string()),
  metrics: z.array(z.string()),
  /**
   * The plot files read as series and how (their paths normalized); absent for a stage
   * without plots, so keys made before plots were read hold.
   */
  plots: z.array(PlotSpec).optional(),
  /**
   * The code digest of the stage's scope: its `code` globs, or else the whole repository's
   * code for a stage whose reads are not traced; null when the stage says `code: false`
   * or is traced and has no globs.
   */
  code: z
    .strictObject({
      digest: z.string(),
      /**
       * Blob holding the `(path, blob id)` list the digest was made from. Not part of
       * what makes a key differ (the digest is), but it lets "why it re-ran" name files.
       */
      manifest: BlobDigest.nullable(),
    })
    .nullable(),
  /**
   * The values of the variables a stage inherits that are keyed rather than fixed: the
   * pipeline's `env` variables and `PATH` (see stageEnvironment); null for an unset one.
   */
  env: z.record(z.string(), z.string().nullable()),
  /**
   * Each program the command starts, by the word that names it (`python3`), as found on
   * the stage's PATH: its real path and the sha256 of its bytes; null when not found.
   */
  interpreters: z.record(z.string(), Interpreter.nullable()),
  /** sha256 of the `fingerprint` command's output; null when the pipeline has none. */
  fingerprint: z.string().nullable(),
  /** For a traced Python stage: what it read in the repository (its key's "manifest" side). */
  readSet: ReadSet.nullable(),
  /**
   * The name of the params file the stage is given (the pipeline's `params_file`, whose
   * extension picks YAML or JSON); absent without one, so keys made before it existed hold.
   */
  paramsFile: z.string().optional(),
  /**
   * The folder of the pipeline's file, repository-relative: where the stage runs and what
   * its command's and declared paths are relative to, so `python3 train.py` of `a/` is
   * never `python3 train.py` of `b/` (one repository's pipelines share the control plane's
   * cache). Absent at the repository root, so keys made before it existed hold.
   */
  pipelineDir: z.string().optional(),
  /**
   * Why the stage's reads were not traced, so it is keyed on the whole code digest
   * (`node is not Python`); null when traced or `code: false`. Not part of the key: a
   * Python command only learns it cannot be traced once it ran.
   */
  untraced: z.string().nullable(),
});
export type KeyInputs = z.infer<typeof KeyInputs>;

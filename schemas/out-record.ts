import { z } from 'zod';
import { BlobDigest } from './blob-digest.js';

/**
 * One stored output of a stage. A file's digest is its bytes' blob; a directory's is the
 * blob of its manifest (see DirManifest), so a directory out restores file by file.
 */
export const OutRecord = z.strictObject({
  /** Relative to the pipeline file's directory, as the pipeline declares it. */
  path: z.string().min(1),
  kind: z.enum(['file', 'dir']),
  digest: BlobDigest,
  /** Bytes of the file, or the sum over a directory's files. */
  size: z.number().int().nonnegative(),
});
export type OutRecord = z.infer<typeof OutRecord>;

/** What a directory out is stored as: its files, sorted by path, each a blob. */
export const DirManifest = z.strictObject({
  version: z.literal(1),
  files: z.array(
    z.strictObject({
      /** Relative to the directory, `/`-separated. */
      path: z.string().min(1),
      digest: BlobDigest,
      size: z.number().int().nonnegative(),
      executable: z.boolean(),
    }),
  ),
});
export type DirManifest = z.infer<typeof DirManifest>;

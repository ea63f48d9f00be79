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
  /**
   * A file its owner may execute, restored so (a directory's files carry theirs in the
   * manifest). Absent rather than false, so records of other files stay as they were.
   */
  executable: z.literal(true).optional(),
});
export type OutRecord = z.infer<typeof OutRecord>;

/**
 * What a directory out is stored as: its files, sorted by path, each a blob, and its
 * empty directories, which a stage downstream may list or write into.
 */
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
  /**
   * Directories with nothing in them, relative and `/`-separated, sorted. Absent when
   * there are none, so a tree without any keeps the manifest (and digest) it always had.
   */
  dirs: z.array(z.string().min(1)).optional(),
});
export type DirManifest = z.infer<typeof DirManifest>;

import { z } from 'zod';
import { BlobDigest } from './blob-digest.js';
import { reservedComponentOf } from './reserved-path.js';

/**
 * A path an out may have wherever it is reported from: relative, and through no `.git`
 * or `.fluksio` in any case, so that a hostile runner cannot have `fluksio pull` write
 * git's config. (`..` stays allowed: a pipeline in a subfolder may declare `../x`.)
 */
const OutPath = z
  .string()
  .min(1)
  .refine((path) => !path.startsWith('/') && !path.includes('\\') && !path.includes('\0'), {
    error: 'expected a relative path with / separators',
  })
  .refine((path) => reservedComponentOf(path) === null, {
    error: 'an output may not be inside .git or .fluksio',
  });

/** A file's place inside a directory out: plain components only, none of them reserved. */
const ManifestPath = OutPath.refine(
  (path) => path.split('/').every((part) => !['', '.', '..'].includes(part)),
  {
    error: 'expected a plain relative path inside the directory (no "", "." or ".." components)',
  },
);

/**
 * One stored output of a stage. A file's digest is its bytes' blob; a directory's is the
 * blob of its manifest (see DirManifest), so a directory out restores file by file.
 */
export const OutRecord = z.strictObject({
  /** Relative to the pipeline file's directory, as the pipeline declares it. */
  path: OutPath,
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
      path: ManifestPath,
      digest: BlobDigest,
      size: z.number().int().nonnegative(),
      executable: z.boolean(),
    }),
  ),
  /**
   * Directories with nothing in them, relative and `/`-separated, sorted. Absent when
   * there are none, so a tree without any keeps the manifest (and digest) it always had.
   */
  dirs: z.array(ManifestPath).optional(),
});
export type DirManifest = z.infer<typeof DirManifest>;

import { z } from 'zod';

/** Version of the stat cache file's layout; a file of another version is ignored. */
export const STAT_CACHE_VERSION = 1;

/**
 * One file's content id, with the stat it was read under:
 * `[repoPath, inode, size, mtimeMs, ctimeMs, blobId]`.
 */
export const StatCacheEntry = z.tuple([
  z.string().min(1),
  z.number().nonnegative(),
  z.number().int().nonnegative(),
  z.number(),
  z.number(),
  z.string().regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/),
]);
export type StatCacheEntry = z.infer<typeof StatCacheEntry>;

/**
 * The code index's own stat cache as stored in `.fluksio/code-stat-cache` (after a
 * first line holding the sha256 of the rest): the blob ids of working-tree files, each
 * valid while the file's inode, size, mtime and ctime are those recorded.
 */
export const StatCacheFile = z.strictObject({
  version: z.literal(STAT_CACHE_VERSION),
  objectFormat: z.enum(['sha1', 'sha256']),
  entries: z.array(StatCacheEntry),
});
export type StatCacheFile = z.infer<typeof StatCacheFile>;

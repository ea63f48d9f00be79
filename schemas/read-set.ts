import { z } from 'zod';

/**
 * What a traced stage read inside the repository, with the digests those things had
 * when it ran: a cache entry made from it is a hit only while every digest still holds
 * (ccache's "direct mode"). Paths are repository-relative and `/`-separated.
 */
export const ReadSet = z.strictObject({
  /** A file it opened for reading or imported → git blob id of its bytes; null: it did not exist. */
  files: z.record(z.string(), z.string().nullable()),
  /** A directory it listed → digest of its entry names; null: it did not exist. */
  dirs: z.record(z.string(), z.string().nullable()),
  /**
   * A directory the import system listed → digest of the names a module could be
   * imported from (directories, `.py`, `.so`…), so a new module that would
   * shadow an import is seen while a new README is not. Bytecode never counts.
   */
  moduleDirs: z.record(z.string(), z.string().nullable()),
  /**
   * A path it looked up without opening it (`os.path.exists`, `os.stat`…) → what that
   * lookup saw: `stat absent`, `stat dir`, `stat file <size> <x|->`, `lstat link <target>`…
   * (see READ_TRACE_HOOK). Missing in entries recorded before lookups were traced: such an
   * entry is never a hit, since a file that appeared where it looked could change its result.
   */
  lookups: z.record(z.string(), z.string()).optional(),
});
export type ReadSet = z.infer<typeof ReadSet>;

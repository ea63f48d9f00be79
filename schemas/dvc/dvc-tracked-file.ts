import { z } from 'zod';

/**
 * A `.dvc` file as `dvc add`, `dvc import` and `dvc import-url` write it
 * (https://dvc.org/doc/user-guide/project-structure/dvc-files): the data it tracks in
 * `outs` (paths relative to the file's folder, or to `wdir`), and for an import where the
 * data comes from in `deps` — `repo.url` for `dvc import`, a URL or an outside path for
 * `dvc import-url`. Only what fluksio reads is checked; the rest (hashes, sizes) is kept.
 */
export const DvcTrackedFile = z.looseObject({
  wdir: z.string().optional(),
  frozen: z.boolean().optional(),
  deps: z
    .array(
      z.looseObject({
        path: z.string().min(1, { error: 'expected a path' }),
        repo: z
          .looseObject({
            url: z.string().min(1, { error: 'expected the repository the data comes from' }),
            rev: z.string().optional(),
            rev_lock: z.string().optional(),
          })
          .optional(),
      }),
    )
    .default([]),
  outs: z
    .array(z.looseObject({ path: z.string().min(1, { error: 'expected a path' }) }))
    .min(1, { error: 'expected the data it tracks' }),
});
export type DvcTrackedFile = z.infer<typeof DvcTrackedFile>;

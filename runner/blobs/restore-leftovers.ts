import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Pipeline } from '../../schemas/pipeline.js';
import { repoPathIn, type Workspace } from '../workspace/workspace.js';
import { resolveWorkspacePath } from '../workspace/workspace-path.js';

/** The suffix of the copy restoreOut assembles beside an out before swapping it in. */
export const RESTORE_SUFFIX = '.fluksio-restore';
/** The suffix of the directory restoreOut moves aside while it swaps a restored one in. */
export const ASIDE_SUFFIX = '.fluksio-old';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/**
 * What a restore of the out named `base` leaves beside it when its process dies (SIGKILL,
 * a second Ctrl-C): `.<base>.<uuid>.fluksio-restore` (a file, or a folder of the files
 * restored so far), the blob store's copy into a file one,
 * `..<base>.<uuid>.fluksio-restore.<uuid>.fluksio-tmp`, and `.<base>.<uuid>.fluksio-old`.
 */
function leftoverPattern(base: string): RegExp {
  const escaped = base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const restore = RESTORE_SUFFIX.replace(/\./g, '\\.');
  const aside = ASIDE_SUFFIX.replace(/\./g, '\\.');
  return new RegExp(
    `^(?:\\.${escaped}\\.${UUID}(?:${restore}|${aside})|\\.\\.${escaped}\\.${UUID}${restore}\\.${UUID}\\.fluksio-tmp)$`,
  );
}

/**
 * Removes what restores of the pipeline's outs and metrics left in the work tree when
 * their process was killed: left there, such a file is untracked and not ignored (its
 * name is not the out's), so it would count as code, and every later run would be dirty
 * and miss the stages keyed on the whole code until someone deleted it by hand. Called
 * holding the store's lock (no restore of this pipeline runs meanwhile) and before the
 * code is read. An out whose path is unsafe is left for the run to refuse. Returns the
 * paths removed.
 */
export async function removeRestoreLeftovers(
  workspace: Workspace,
  pipeline: Pick<Pipeline, 'stages'>,
): Promise<string[]> {
  const byFolder = new Map<string, RegExp[]>();
  for (const stage of Object.values(pipeline.stages)) {
    for (const out of [...stage.outs, ...stage.metrics]) {
      let absPath: string;
      try {
        absPath = await resolveWorkspacePath(workspace.repoRoot, repoPathIn(workspace, out), {
          out: true,
          allowFinalSymlink: true,
        });
      } catch {
        continue;
      }
      const folder = path.dirname(absPath);
      byFolder.set(folder, [...(byFolder.get(folder) ?? []), leftoverPattern(path.basename(absPath))]);
    }
  }
  const removed: string[] = [];
  for (const [folder, patterns] of byFolder) {
    for (const name of await readdir(folder).catch((): string[] => [])) {
      if (!patterns.some((pattern) => pattern.test(name))) continue;
      await rm(path.join(folder, name), { recursive: true, force: true });
      removed.push(path.join(folder, name));
    }
  }
  return removed;
}

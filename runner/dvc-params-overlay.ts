import { createHash, randomUUID } from 'node:crypto';
import { lstatSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { dvcParamLocation, overlayDvcParams } from '../core/dvc/dvc-params-overlay.js';
import type { Pipeline } from '../schemas/pipeline.js';
import type { RunPipelineOptions } from './run-pipeline-options.js';
import { ParamsFileJournal } from './params-file-journal.js';
import { repoPathIn, type Workspace } from './workspace/workspace.js';
import { resolveWorkspacePath } from './workspace/workspace-path.js';

/** A params file holding a stage's values: where, what it held before, and what was written. */
interface Held {
  path: string;
  original: Buffer;
  written: string;
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * Holds one stage's DVC params files: each written with the run's values of the params the
 * stage lists, and put back as it was by the returned function, which says what it could not
 * put back. Every stage of a translated `dvc.yaml` takes the files in turn (`lock`), those
 * that list no param too: a stage that reads a params file (as a dep, or unlisted) must never
 * see another stage's values. A process that ends before the function is called (an uncaught
 * EPIPE, a second Ctrl-C) still puts the files back as it exits; one killed outright leaves a
 * journal that the next run here puts them back from (ParamsFileJournal).
 *
 * The stage may have changed what it was given (DESIGN §5: a pull request's stage is not
 * trusted): a file is written only inside the repository, checked right before, and put back
 * only when it still holds exactly what was written — never through a link the stage made
 * (the runner would write outside its sandbox), never over an edit its user made meanwhile.
 * Nothing is written, and nothing waits, for a pipeline that is not a translated `dvc.yaml`.
 */
export async function overlayDvcParamsFiles(
  pipeline: Pipeline,
  stage: string,
  workspace: Workspace,
  values: RunPipelineOptions['params'],
  lock: { tail: Promise<void> },
): Promise<() => Promise<string[]>> {
  const listed = pipeline.stages[stage]?.params ?? [];
  if (!pipeline.dvc_params) return async () => [];
  const byFile = new Map<string, Parameters<typeof overlayDvcParams>[1][number][]>();
  for (const name of listed) {
    const value = values[name];
    if (value === undefined) continue;
    const { file, path: at } = dvcParamLocation(name);
    byFile.set(file, [...(byFile.get(file) ?? []), { path: at, value, spec: pipeline.params[name] }]);
  }
  let release = (): void => {};
  const previous = lock.tail;
  lock.tail = new Promise((resolve) => (release = resolve));
  await previous;
  const journal = new ParamsFileJournal(workspace.pipelineDir);
  const held: Held[] = [];
  const putBackAll = (): string[] => {
    const warnings: string[] = [];
    for (const file of held.reverse()) {
      const warning = putBack(workspace.repoRoot, file);
      if (warning) warnings.push(warning);
      rmSync(journal.entryPath(file.path), { force: true });
    }
    held.length = 0;
    return warnings;
  };
  const restore = async () => {
    try {
      return putBackAll();
    } finally {
      process.off('exit', putBackAll);
      release();
    }
  };
  process.once('exit', putBackAll);
  try {
    for (const [file, entries] of byFile) {
      const absolute = await resolveWorkspacePath(workspace.repoRoot, repoPathIn(workspace, file));
      const original = await readFile(absolute);
      const written = overlayDvcParams(original.toString('utf8'), entries);
      if (written === null) continue;
      await journal.record(absolute, original, written);
      held.push({ path: absolute, original, written });
      await writeFile(absolute, written);
    }
  } catch (error) {
    await restore();
    throw error;
  }
  return restore;
}

/**
 * Puts one params file back as it was, or says why not. Synchronous, for the process's
 * `exit` handler. The file is replaced by a rename in its folder's real path, which replaces
 * a link rather than following it, after that folder is checked to be inside the repository.
 */
function putBack(repoRoot: string, file: Held): string | null {
  const shown = path.relative(repoRoot, file.path);
  try {
    const folder = realpathSync(path.dirname(file.path));
    const root = realpathSync(repoRoot);
    if (folder !== root && !folder.startsWith(root + path.sep)) {
      return `${shown} was not put back: the stage moved its folder outside the repository`;
    }
    const target = path.join(folder, path.basename(file.path));
    const stats = lstatSync(target, { throwIfNoEntry: false });
    if (stats === undefined) return `${shown} was not put back: the stage removed it`;
    if (!stats.isFile() || sha256(readFileSync(target)) !== sha256(file.written)) {
      return `${shown} was not put back: it changed while the stage ran (left as it is now)`;
    }
    const temporary = path.join(folder, `.${path.basename(file.path)}.${randomUUID()}.fluksio`);
    writeFileSync(temporary, file.original, { flag: 'wx' });
    renameSync(temporary, target);
    return null;
  } catch (error) {
    return `${shown} was not put back: ${(error as Error).message}`;
  }
}

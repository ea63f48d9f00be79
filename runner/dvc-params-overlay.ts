import { rmSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dvcParamLocation, overlayDvcParams } from '../core/dvc/dvc-params-overlay.js';
import type { Pipeline } from '../schemas/pipeline.js';
import type { RunPipelineOptions } from './run-pipeline-options.js';
import { ParamsFileJournal } from './params-file-journal.js';
import { repoPathIn, type Workspace } from './workspace/workspace.js';
import { resolveWorkspacePath } from './workspace/workspace-path.js';

/**
 * Holds one stage's DVC params files: each written with the run's values of the params the
 * stage lists, and put back as it was by the returned function. Every stage of a translated
 * `dvc.yaml` takes the files in turn (`lock`), those that list no param too: a stage that
 * reads a params file (as a dep, or unlisted) must never see another stage's values. A
 * process that ends before the function is called (an uncaught EPIPE, a second Ctrl-C)
 * still puts the files back as it exits; one killed outright leaves a journal that the next
 * run here puts them back from (putBackDvcParamsFiles). A file is written only inside the
 * repository, checked right before (a stage may have made it a symlink to elsewhere).
 * Nothing is written, and nothing waits, for a pipeline that is not a translated `dvc.yaml`.
 */
export async function overlayDvcParamsFiles(
  pipeline: Pipeline,
  stage: string,
  workspace: Workspace,
  values: RunPipelineOptions['params'],
  lock: { tail: Promise<void> },
): Promise<() => Promise<void>> {
  const listed = pipeline.stages[stage]?.params ?? [];
  if (!pipeline.dvc_params) return async () => {};
  const byFile = new Map<string, Parameters<typeof overlayDvcParams>[1][number][]>();
  for (const name of listed) {
    const value = values[name];
    if (value === undefined) continue;
    const { file, path } = dvcParamLocation(name);
    byFile.set(file, [...(byFile.get(file) ?? []), { path, value, spec: pipeline.params[name] }]);
  }
  let release = (): void => {};
  const previous = lock.tail;
  lock.tail = new Promise((resolve) => (release = resolve));
  await previous;
  const journal = new ParamsFileJournal(workspace.pipelineDir);
  const originals: [string, Buffer][] = [];
  const restoreNow = () => {
    for (const [path, bytes] of originals.reverse()) {
      writeFileSync(path, bytes);
      rmSync(journal.entryPath(path), { force: true });
    }
    originals.length = 0;
  };
  const restore = async () => {
    try {
      for (const [path, bytes] of originals.reverse()) {
        await writeFile(path, bytes);
        await journal.forget(path);
      }
      originals.length = 0;
    } finally {
      process.off('exit', restoreNow);
      release();
    }
  };
  process.once('exit', restoreNow);
  try {
    for (const [file, entries] of byFile) {
      const path = await resolveWorkspacePath(workspace.repoRoot, repoPathIn(workspace, file));
      const bytes = await readFile(path);
      const text = overlayDvcParams(bytes.toString('utf8'), entries);
      if (text === null) continue;
      await journal.record(path, bytes, text);
      originals.push([path, bytes]);
      await writeFile(path, text);
    }
  } catch (error) {
    await restore();
    throw error;
  }
  return restore;
}

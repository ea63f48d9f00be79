import { posix } from 'node:path';
import type { PreviousStage } from '../schemas/previous-stage.js';
import { producerOf } from '../core/pipeline/stage-graph.js';
import { describeCodeChanges } from './keys/code-digest.js';
import type { ReadSetProbe } from './keys/read-set-probe.js';
import { rerunReasons } from './keys/rerun-reasons.js';
import type { RunPipelineOptions } from './run-pipeline-options.js';
import type { StageKeyMaterial } from './keys/stage-key-inputs.js';

/**
 * Why a stage misses, compared with its inputs in the previous run (StageCache.previous):
 * a traced stage compared with a traced entry names what it read that changed; a change of
 * code is named file by file from the previous entry's code manifest, when it can be read.
 */
export async function missReasons(
  name: string,
  {
    options,
    ranUpstream,
    material,
    probe,
  }: {
    options: Pick<RunPipelineOptions, 'cache' | 'blobs' | 'workspace' | 'pipeline'>;
    /** Stages of this run that executed rather than restored. */
    ranUpstream: ReadonlySet<string>;
    material: StageKeyMaterial;
    probe: ReadSetProbe;
  },
): Promise<string[]> {
  const previousStage = await options.cache.previous(name).catch((): PreviousStage | null => null);
  const previous = previousStage?.keyInputs ?? null;
  const readSet = material.traceable ? previous?.readSet : null;
  const current = readSet && material.traceable ? material.traceable : material.inputs;
  const changes = readSet ? await probe.changes(readSet, true).catch(() => null) : null;
  const listed = readSet
    ? probe.undeclaredOutsListed(readSet, name).map((phrase) => `${name} ${phrase}`)
    : [];
  const readChanges = changes === null ? null : [...listed, ...changes];
  let codeChanges: string[] | null = null;
  const manifest = previous?.code?.manifest;
  if (manifest && material.code && previous?.code?.digest !== current.code?.digest) {
    try {
      const before = JSON.parse((await options.blobs.getBytes(manifest)).toString()) as [string, string][];
      const relative = (entries: [string, string][]) =>
        entries.map(([path, id]): [string, string] => [
          posix.relative(options.workspace.pipelineDirInRepo || '.', path) || path,
          id,
        ]);
      codeChanges = describeCodeChanges(relative(before), relative(material.code.entries));
    } catch {
      codeChanges = null;
    }
  }
  return rerunReasons(current, previousStage, {
    producerOf: (dep) => producerOf(options.pipeline, dep),
    ranUpstream,
    codeChanges,
    readChanges,
  });
}

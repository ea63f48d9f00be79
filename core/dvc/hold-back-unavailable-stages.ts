import type { Stage } from '../../schemas/pipeline.js';
import { normalizePipelinePath, pathContains, repoPathOf } from '../pipeline/pipeline-paths.js';
import { dvcDataOrigin, type DvcDataFiles, type DvcDataOrigin } from './dvc-data-origin.js';

/** A stage of `dvc.yaml` that was left out of the pipeline before, and what it would make. */
export interface LeftOutStage {
  /** Its outs, metrics and plots, relative to the pipeline's folder. */
  outs: string[];
  /** `frozen`: DVC's `frozen: true`; `not-honoured`: remote outs or URL deps. */
  why: 'frozen' | 'not-honoured';
}

export interface HeldBackStages {
  /** The stages that cannot run, in the pipeline's order; the caller leaves them out. */
  held: string[];
  /** One sentence per stage held back (`stage prepare: cannot run: …`) and per import used as it is. */
  notes: string[];
}

/**
 * The stages of a translated `dvc.yaml` that cannot run here because a dep is absent from
 * the workspace and nothing here can make it: data a `.dvc` file tracks (`dvc import`,
 * `dvc import-url`, `dvc add`), which fluksio does not fetch; an out of a frozen stage or of
 * one left out for remote paths; or an out of a stage held back in turn. Each is named
 * with its reason, so the rest still runs (DVC's own `dvc repro` would stop at the first).
 * An import that is in the workspace is a dep like any file, hashed as usual, with a note.
 * A missing dep with none of these reasons is left for the pipeline rules to report.
 */
export function holdBackUnavailableStages(input: {
  stages: Readonly<Record<string, Stage>>;
  leftOut: ReadonlyMap<string, LeftOutStage>;
  files: DvcDataFiles;
}): HeldBackStages {
  const { stages, leftOut, files } = input;
  const held = new Map<string, string>();
  const origins = new Map<string, DvcDataOrigin | null>();
  const originOf = (dep: string) => {
    if (!origins.has(dep)) origins.set(dep, dvcDataOrigin(dep, files));
    return origins.get(dep) ?? null;
  };
  const makes = (outs: readonly string[], dep: string) =>
    outs.map(normalizePipelinePath).some((out) => pathContains(out, dep) || pathContains(dep, out));
  const outsOf = (stage: Stage) => [...stage.outs, ...stage.metrics];

  /** Why `dep` cannot be had, or null when it can (or when the rules should say why not). */
  const unmet = (path: string): string | null => {
    const dep = normalizePipelinePath(path);
    const repoPath = repoPathOf(files.pipelineDir, dep);
    if (repoPath === null) return null;
    const maker = Object.entries(stages).find(([, stage]) => makes(outsOf(stage), dep));
    if (maker && !held.has(maker[0])) return null;
    if (files.exists(repoPath)) return null;
    if (maker) return `it needs ${path} from stage ${maker[0]}, which cannot run: ${held.get(maker[0])}`;
    const [name, left] = [...leftOut].find(([, stage]) => makes(stage.outs, dep)) ?? [];
    if (name !== undefined && left !== undefined) {
      return left.why === 'frozen'
        ? `${path} is an out of stage ${name}, which is frozen (so it does not run) and absent from the workspace; fetch it yourself (dvc pull) or unfreeze ${name} (dvc unfreeze ${name})`
        : `${path} is an out of stage ${name}, which cannot be honoured, and absent from the workspace`;
    }
    const origin = originOf(dep);
    return origin && missingDataReason(origin);
  };

  for (let changed = true; changed;) {
    changed = false;
    for (const [name, stage] of Object.entries(stages)) {
      if (held.has(name)) continue;
      const reason = stage.deps.map(unmet).find((each) => each !== null);
      if (reason === undefined || reason === null) continue;
      held.set(name, reason);
      changed = true;
    }
  }

  const notes: string[] = [];
  const usedImports = new Map<string, { origin: DvcDataOrigin; stages: string[] }>();
  for (const [name, stage] of Object.entries(stages)) {
    if (held.has(name)) {
      notes.push(`stage ${name}: cannot run: ${held.get(name)}`);
      continue;
    }
    for (const dep of stage.deps.map(normalizePipelinePath)) {
      if (Object.values(stages).some((other) => makes(outsOf(other), dep))) continue;
      const origin = originOf(dep);
      if (origin === null || origin.kind === 'add') continue;
      const used = usedImports.get(origin.dvcFile) ?? { origin, stages: [] };
      if (!used.stages.includes(name)) used.stages.push(name);
      usedImports.set(origin.dvcFile, used);
    }
  }
  for (const { origin, stages: readers } of usedImports.values()) {
    notes.push(
      `${origin.path} comes from \`dvc ${origin.kind}\` of ${origin.source} (${origin.dvcFile}): the copy in the workspace is used, hashed as any dep of ${readers.join(', ')}; fluksio neither fetches nor updates it`,
    );
  }
  return { held: Object.keys(stages).filter((name) => held.has(name)), notes };
}

/** Why data a `.dvc` file tracks is not here, and what to do about it. */
function missingDataReason(origin: DvcDataOrigin): string {
  if (origin.kind === 'add')
    return `${origin.path} is tracked by DVC (${origin.dvcFile}) and absent from the workspace, which fluksio cannot fetch; fetch it yourself (dvc pull) or commit it`;
  return `${origin.path} comes from \`dvc ${origin.kind}\` of ${origin.source} (${origin.dvcFile}), which fluksio cannot fetch; fetch it yourself (dvc pull / dvc ${origin.kind}) or commit it`;
}

import { join } from 'node:path';
import type { DirManifest, OutRecord } from '../../schemas/out-record.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import { producerOf } from '../../core/pipeline/stage-graph.js';
import { codeDigest, describeCodeChanges, type CodeScope } from './code-digest.js';
import type { CodeIndex } from './code-index.js';
import { contentDigest, manifestContentDigest } from './content-digest.js';
import { dvcOverlaidFiles } from './dvc-overlaid-files.js';
import type { StageKeyMaterial } from './stage-key-inputs.js';
import { pipelinePathIn, repoPathIn, type Workspace } from '../workspace/workspace.js';

/** What changed while a stage ran, and what to tell the user about it. */
export interface StageRecheck {
  /** Key inputs that changed while it ran: its key no longer says what it read, so its result is not cached. */
  stageDirty: string[];
  /** Every change to the run's code while it ran, in its key or not: the run's stamp cannot claim one code digest. */
  runDirty: string[];
  /** Files that appeared or changed while it ran and that neither an out nor `.gitignore` covers. */
  warnings: string[];
}

export interface RecheckStageInputsOptions {
  stage: string;
  pipeline: Pipeline;
  workspace: Workspace;
  /** What the stage's key was computed from. */
  material: StageKeyMaterial;
  /** Outs of this run so far: a directory out's digest is its manifest's, not comparable with the disk's. */
  produced: ReadonlyMap<string, OutRecord>;
  /** A directory out's manifest, by its record's digest: what the disk is compared with. */
  readManifest(digest: OutRecord['digest']): Promise<DirManifest>;
  /** The code index the key was computed from, and one read after the stage ended. */
  before: CodeIndex;
  after: CodeIndex;
  /**
   * Hides the run's secrets in a sentence (Masker.mask), before it is cut: a cut through a
   * secret (a file named after it) would leave its start where no mask finds it.
   */
  mask?: (sentence: string) => string;
}

/** Paths named in one sentence before the rest are counted. */
const NAMED_PATHS = 5;
/**
 * The longest sentence kept: paths are the repository's to choose, and these sentences
 * travel in events and a run's finish, which the control plane bounds.
 */
const MAX_SENTENCE = 1000;

/**
 * The after-check of a stage that ran (issue 8, defects 1 and 10): reads its deps again
 * and compares the code of its scope (and of the whole run's) before and after, so that a
 * file edited while the stage ran — by the user, or by the stage itself — never leaves a
 * result keyed on what the stage did not read. Also names the untracked files that
 * appeared: a stage writing an undeclared file would otherwise make every later run dirty
 * and uncached without a word.
 */
export async function recheckStageInputs(options: RecheckStageInputsOptions): Promise<StageRecheck> {
  const { stage, material, workspace, before, after } = options;
  const overlaid = dvcOverlaidFiles(options.pipeline);
  const depsDirty: string[] = [];
  for (const [dep, keyed] of Object.entries(material.inputs.deps)) {
    // A directory out upstream is keyed by its manifest: the disk must hold what it lists.
    // Another stage writing into it (before this one ran, or while) is a change too.
    const record = options.produced.get(dep);
    const folder = record?.kind === 'dir' && record.digest === keyed;
    const digest = folder ? manifestContentDigest(await options.readManifest(record.digest)) : keyed;
    const now = await contentDigest(join(workspace.pipelineDir, dep)).catch(() => null);
    const stamp = overlaid.has(dep) ? undefined : material.depStamps[dep];
    if (now === null) depsDirty.push(`${dep} was deleted while ${stage} ran`);
    else if (now.digest !== digest && folder) {
      const maker = producerOf(options.pipeline, dep) ?? 'its stage';
      depsDirty.push(
        `${dep} no longer holds what ${maker} made when ${stage} ended (changed before or while it ran)`,
      );
    } else if (now.digest !== digest) depsDirty.push(`${dep} changed while ${stage} ran`);
    // Back to its old content, but the stage may have read it in between.
    else if (stamp !== undefined && now.stamp !== stamp)
      depsDirty.push(`${dep} was rewritten while ${stage} ran`);
  }
  const stageDirty = [...depsDirty];
  // fluksio writes the overlaid params files itself, and puts them back as they were.
  const exempt = new Set([...overlaid].map((file) => repoPathIn(workspace, file)));
  const codeDirty = (scope: CodeScope) =>
    codeChangesWhileRunning(stage, scope, before, after, workspace, exempt);
  if (material.code && material.codeScope) stageDirty.push(...codeDirty(material.codeScope));

  const outs = Object.values(options.pipeline.stages)
    .flatMap((each) => [...each.outs, ...each.metrics])
    .map((path) => repoPathIn(workspace, path));
  const runScope: CodeScope = {
    pipelineDir: workspace.pipelineDirInRepo,
    include: options.pipeline.code ?? null,
    exclude: outs,
  };
  // The run's code covers the stage's (and tracked deps); ignored deps are named apart. A
  // tracked dep rewritten is said once, though both checks see it.
  const runDirty = [...new Set([...depsDirty, ...codeDirty(runScope)])];

  // Files it created, or rewrote while they already differed from HEAD (an untracked
  // file from its last run): git sees them, so every later run would start dirty and with
  // another code digest. A committed file edited meanwhile is the user's, and dirty only.
  const isOut = (repoPath: string) => outs.some((out) => repoPath === out || repoPath.startsWith(`${out}/`));
  const written = [...after.changed]
    .filter((repoPath) => {
      const id = after.files.get(repoPath);
      const old = before.files.get(repoPath);
      const isNew = old === undefined || before.changed.has(repoPath);
      return id !== undefined && id !== old && isNew && !isOut(repoPath);
    })
    .sort()
    .map((repoPath) => pipelinePathIn(workspace, repoPath));
  const warnings: string[] = [];
  if (written.length > 0) {
    const one = written.length === 1;
    const rest = written.length - NAMED_PATHS;
    warnings.push(
      `${stage} wrote ${written.slice(0, NAMED_PATHS).join(', ')}${rest > 0 ? ` and ${rest} more files` : ''} ` +
        `(or ${one ? 'it' : 'they'} changed while it ran), which ${one ? 'is' : 'are'} neither an out nor ignored: ` +
        `declare ${one ? 'it' : 'them'} in ${stage}'s outs, or add ${one ? 'it' : 'them'} to .gitignore — ` +
        'otherwise every later run is dirty and misses the cache',
    );
  }
  const mask = options.mask ?? ((sentence: string) => sentence);
  const clip = (sentence: string) => clipSentence(mask(sentence));
  return { stageDirty: stageDirty.map(clip), runDirty: runDirty.map(clip), warnings: warnings.map(clip) };
}

function clipSentence(sentence: string): string {
  return sentence.length <= MAX_SENTENCE ? sentence : `${sentence.slice(0, MAX_SENTENCE - 1)}…`;
}

/**
 * What changed in a scope between two indexes, as sentences: the files whose content
 * changed, were added or removed, then those whose content is back as it was but which
 * were rewritten meanwhile (another stamp), since the stage may have run the edit.
 */
function codeChangesWhileRunning(
  stage: string,
  scope: CodeScope,
  before: CodeIndex,
  after: CodeIndex,
  workspace: Workspace,
  exempt: ReadonlySet<string>,
): string[] {
  const old = codeDigest(before, scope);
  const now = codeDigest(after, scope);
  const sentences: string[] = [];
  if (old.digest !== now.digest) {
    const relative = (entries: [string, string][]) =>
      entries.map(([path, id]): [string, string] => [pipelinePathIn(workspace, path), id]);
    const changes = describeCodeChanges(relative(old.entries), relative(now.entries)).join(', ');
    sentences.push(`code changed while ${stage} ran: ${changes}`);
  }
  const oldIds = new Map(old.entries);
  const rewritten = now.entries
    .filter(
      ([path, id]) =>
        oldIds.get(path) === id && !exempt.has(path) && before.stamps.get(path) !== after.stamps.get(path),
    )
    .map(([path]) => pipelinePathIn(workspace, path));
  if (rewritten.length > 0) {
    const rest = rewritten.length - NAMED_PATHS;
    const named = `${rewritten.slice(0, NAMED_PATHS).join(', ')}${rest > 0 ? ` and ${rest} more files` : ''}`;
    sentences.push(`${named} ${rewritten.length === 1 ? 'was' : 'were'} rewritten while ${stage} ran`);
  }
  return sentences;
}

import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Colors } from 'picocolors/types.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import { formatProblems } from '../../core/problem.js';
import type { StageVerification } from '../../schemas/stage-verification.js';
import { loadProjectPipeline } from '../../core/dvc/load-project-pipeline.js';
import { readCodeIndex } from '../../runner/keys/code-index.js';
import { DiskBlobStore } from '../../runner/blobs/disk-blob-store.js';
import { fingerprintOf } from '../../runner/keys/fingerprint.js';
import { OverlayBlobStore } from '../../runner/blobs/overlay-blob-store.js';
import type { BlobStore } from '../../runner/ports.js';
import { createScratchCheckout, type ScratchCheckout } from '../../runner/workspace/scratch-checkout.js';
import { makePrivateDir } from '../../runner/sandbox/private-dir.js';
import { stageEnvironment } from '../../runner/sandbox/stage-environment.js';
import { verifyStage } from '../../runner/verify-stage.js';
import type { Workspace } from '../../runner/workspace/workspace.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { renderStageVerification } from '../render/render-verification.js';
import { verifyProgress } from '../render/verify-progress.js';
import type { VerificationPlan } from './plan-verification.js';

export interface VerifyInScratchOptions {
  plan: VerificationPlan;
  /** The work tree the run was made in. */
  source: Workspace;
  /** The project's blob store: read, never written. */
  blobs: BlobStore;
  io: CliIo;
  /** Where progress goes (nowhere for `--json` off a terminal). */
  write(text: string): void;
  colors: Colors;
}

/**
 * Verifies the planned stages one after the other in one scratch checkout of the run's
 * commit, reset between stages, with a scratch blob store over the project's; both are
 * removed at the end, also on Ctrl-C (which stops after the stage in progress is killed)
 * and on a second Ctrl-C (which exits at once).
 */
export async function verifyInScratch(
  options: VerifyInScratchOptions,
): Promise<{ stages: StageVerification[]; cancelled: boolean }> {
  const { plan, source, io, write, colors } = options;
  const stages: StageVerification[] = [];
  if (plan.entries.length === 0) return { stages, cancelled: false };
  const abort = new AbortController();
  const cancel = () => abort.abort('cancelled');
  if (io.signal?.aborted) cancel();
  io.signal?.addEventListener('abort', cancel, { once: true });
  const scratchBlobs = await mkdtemp(path.join(tmpdir(), 'fluksio-verify-blobs-'));
  let scratch: ScratchCheckout | null = null;
  // A second Ctrl-C exits at once (cli/main.ts), without reaching the `finally` below.
  const removeOnExit = () => {
    scratch?.removeNow();
    rmSync(scratchBlobs, { recursive: true, force: true });
  };
  process.once('exit', removeOnExit);
  try {
    scratch = await createScratchCheckout(source.repoRoot, plan.run.commit);
    const checkout = scratch;
    const pipelineDirInRepo = path.posix.dirname(plan.run.pipelinePath).replace(/^\.$/, '');
    const workspace: Workspace = {
      repoRoot: checkout.root,
      pipelineDir: path.join(checkout.root, pipelineDirInRepo),
      pipelineDirInRepo,
    };
    const pipeline = await readCommittedPipeline(workspace, source, plan.run.pipelinePath);
    const codeIndex = await readCodeIndex(checkout.root);
    // The fingerprint describes this machine's tools, and its command may read ignored
    // files (a toolchain file): it runs in the work tree, as `fluksio run` would now.
    const fingerprint = pipeline.fingerprint
      ? await fingerprintOf(
          pipeline.fingerprint,
          source.pipelineDir,
          stageEnvironment({
            source: io.env,
            pass: pipeline.env,
            extra: {},
            privateDir: await makePrivateDir(scratchBlobs, '.fingerprint'),
          }),
        )
      : null;
    const blobs = new OverlayBlobStore(new DiskBlobStore(scratchBlobs), options.blobs);
    const width = Math.max(...plan.entries.map(({ stage }) => stage.length));
    for (const [index, { stage, entry }] of plan.entries.entries()) {
      if (abort.signal.aborted) break;
      if (index > 0) await checkout.reset();
      write(`${colors.bold('▸')} ${colors.bold(stage)}  ${colors.dim('re-executing')}\n`);
      const verification = await verifyStage({
        stage,
        entry,
        workspace,
        resetWorkspace: () => checkout.reset(),
        sourceWorkspace: source,
        pipeline,
        params: plan.run.params,
        codeIndex,
        produced: plan.produced,
        blobs,
        environment: io.env,
        fingerprint,
        events: verifyProgress(write, colors, width),
        signal: abort.signal,
      });
      if (abort.signal.aborted) break;
      stages.push(verification);
      write(renderStageVerification(verification, width, colors));
    }
  } finally {
    io.signal?.removeEventListener('abort', cancel);
    process.removeListener('exit', removeOnExit);
    await scratch?.remove();
    await rm(scratchBlobs, { recursive: true, force: true });
  }
  return { stages, cancelled: abort.signal.aborted };
}

/** The pipeline file as the run's commit has it, validated like `fluksio run` validates it. */
async function readCommittedPipeline(
  workspace: Workspace,
  source: Workspace,
  pipelinePath: string,
): Promise<Pipeline> {
  const text = await readFile(path.join(workspace.repoRoot, pipelinePath), 'utf8').catch((error: unknown) => {
    throw new Error(`The run's commit has no pipeline file ${pipelinePath}`, { cause: error });
  });
  const { pipeline, problems } = loadProjectPipeline({
    file: pipelinePath,
    text,
    readFile: (name) => {
      const file = path.resolve(workspace.pipelineDir, name);
      return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    },
    pipelineDir: workspace.pipelineDirInRepo,
    // Ignored deps are not in the commit; they are copied from the work tree when needed.
    exists: (repoPath) =>
      existsSync(path.join(workspace.repoRoot, repoPath)) || existsSync(path.join(source.repoRoot, repoPath)),
  });
  if (!pipeline) throw new Error(`${pipelinePath} at the run's commit: ${formatProblems(problems)}`);
  return pipeline;
}

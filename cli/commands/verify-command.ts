import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pc from 'picocolors';
import { formatProblems } from '../../schemas/problem.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import type { StageVerification, VerifyReport } from '../../schemas/stage-verification.js';
import { validatePipeline } from '../../schemas/validate-pipeline.js';
import { readCodeIndex } from '../../runner/code-index.js';
import { DiskBlobStore } from '../../runner/disk-blob-store.js';
import { fingerprintOf } from '../../runner/fingerprint.js';
import { OverlayBlobStore } from '../../runner/overlay-blob-store.js';
import type { EventSink } from '../../runner/ports.js';
import { createScratchCheckout } from '../../runner/scratch-checkout.js';
import { stageEnvironment } from '../../runner/stage-environment.js';
import { verifyStage } from '../../runner/verify-stage.js';
import type { Workspace } from '../../runner/workspace.js';
import type { CliIo } from '../cli-io.js';
import { openProjectStore, requireRun } from '../local/open-project-store.js';
import { planVerification, type VerificationPlan, type VerifySelection } from '../local/plan-verification.js';
import { colorEnabled } from '../render/color-enabled.js';
import { renderStageVerification, renderVerifySummary } from '../render/render-verification.js';
import { UsageError } from '../usage-error.js';

export interface VerifyCommandOptions {
  json?: boolean;
  /** How many cached stages to pick at random. @defaultValue '3' */
  sample?: string;
  /** Every cached stage. */
  all?: boolean;
  /** Only these stages (repeatable). */
  stage: string[];
  pipeline?: string;
}

/** Stages verified when neither `--all`, `--sample` nor `--stage` says otherwise. */
const DEFAULT_SAMPLE = 3;

/**
 * `fluksio verify RUN`: re-executes a sample of a run's cached stages in a scratch
 * checkout of the run's commit, each on the inputs its cache entry was made from, and
 * reports each stage deterministic, nondeterministic, stale or unverifiable (see
 * runner/verify-stage.ts). The store is read first and closed before anything runs, so
 * a long verification never holds it. Exit 0 when every verified stage is
 * deterministic, 1 otherwise, 2 for bad input (a dirty run among it).
 */
export async function verifyCommand(
  idOrPrefix: string,
  options: VerifyCommandOptions,
  io: CliIo,
): Promise<number> {
  const selection = readSelection(options);
  const store = await openProjectStore(options.pipeline, io);
  let plan: VerificationPlan;
  try {
    plan = await planVerification(store, await requireRun(store, idOrPrefix), selection);
  } finally {
    await store.state.close();
  }
  const source = store.project.workspace;

  const colors = pc.createColors(colorEnabled(io, options.json ? io.stderr : io.stdout));
  const progressOut = options.json ? (io.stderr.isTTY ? io.stderr : null) : io.stdout;
  const write = (text: string) => progressOut?.write(text);
  const { run } = plan;
  write(
    `${colors.bold('fluksio verify')} ${run.id}  ${colors.dim(`${run.pipelinePath} · ${run.commit.slice(0, 10)} · re-executing in a scratch checkout of the commit`)}\n`,
  );

  const stages: StageVerification[] = [];
  if (plan.entries.length > 0) {
    const abort = new AbortController();
    const cancel = () => abort.abort('cancelled');
    if (io.signal?.aborted) cancel();
    io.signal?.addEventListener('abort', cancel, { once: true });
    const scratchBlobs = await mkdtemp(path.join(tmpdir(), 'fluksio-verify-blobs-'));
    const scratch = await createScratchCheckout(source.repoRoot, run.commit);
    try {
      const pipelineDirInRepo = path.posix.dirname(run.pipelinePath).replace(/^\.$/, '');
      const workspace: Workspace = {
        repoRoot: scratch.root,
        pipelineDir: path.join(scratch.root, pipelineDirInRepo),
        pipelineDirInRepo,
      };
      const pipeline = await readCommittedPipeline(workspace, source, run.pipelinePath);
      const codeIndex = await readCodeIndex(scratch.root);
      // The fingerprint describes this machine's tools, and its command may read ignored
      // files (a toolchain file): it runs in the work tree, as `fluksio run` would now.
      const fingerprint = pipeline.fingerprint
        ? await fingerprintOf(
            pipeline.fingerprint,
            source.pipelineDir,
            stageEnvironment({ source: io.env, pass: pipeline.env, extra: {} }),
          )
        : null;
      const blobs = new OverlayBlobStore(new DiskBlobStore(scratchBlobs), store.state.blobs);
      const width = Math.max(...plan.entries.map(({ stage }) => stage.length));
      for (const [index, { stage, entry }] of plan.entries.entries()) {
        if (abort.signal.aborted) break;
        if (index > 0) await scratch.reset();
        write(`${colors.bold('▸')} ${colors.bold(stage)}  ${colors.dim('re-executing')}\n`);
        const verification = await verifyStage({
          stage,
          entry,
          workspace,
          resetWorkspace: () => scratch.reset(),
          sourceWorkspace: source,
          pipeline,
          params: run.params,
          codeIndex,
          produced: plan.produced,
          blobs,
          environment: io.env,
          fingerprint,
          events: againNotice(write, colors),
          signal: abort.signal,
        });
        if (abort.signal.aborted) break;
        stages.push(verification);
        write(renderStageVerification(verification, width, colors));
      }
    } finally {
      io.signal?.removeEventListener('abort', cancel);
      await scratch.remove();
      await rm(scratchBlobs, { recursive: true, force: true });
    }
    if (abort.signal.aborted) {
      write(`${colors.yellow('cancelled')}: ${stages.length} of ${plan.entries.length} stages verified\n`);
      return 1;
    }
  }

  const report: VerifyReport = {
    run: run.id,
    commit: run.commit,
    stages,
    notVerified: plan.notVerified,
    ok: stages.every((stage) => stage.verdict === 'deterministic'),
  };
  write(renderVerifySummary(report, colors));
  if (options.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return report.ok ? 0 : 1;
}

/** `--all`, `--sample N` and `--stage NAME` as one selection; UsageError for a bad combination. */
function readSelection(options: VerifyCommandOptions): VerifySelection {
  if (options.all && options.sample !== undefined) {
    throw new UsageError('--all and --sample exclude each other: give one');
  }
  let sample: number | null = options.stage.length > 0 || options.all ? null : DEFAULT_SAMPLE;
  if (options.sample !== undefined) {
    sample = Number(options.sample);
    if (!/^\d+$/.test(options.sample) || sample < 1) {
      throw new UsageError(`--sample: "${options.sample}" is not a whole number ≥ 1`);
    }
  }
  return { stages: options.stage, sample };
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
  const { pipeline, problems } = validatePipeline(text, {
    pipelineDir: workspace.pipelineDirInRepo,
    // Ignored deps are not in the commit; they are copied from the work tree when needed.
    exists: (repoPath) =>
      existsSync(path.join(workspace.repoRoot, repoPath)) || existsSync(path.join(source.repoRoot, repoPath)),
  });
  if (!pipeline) throw new Error(`${pipelinePath} at the run's commit: ${formatProblems(problems)}`);
  return pipeline;
}

/** Says so on the terminal when a stage is executed a second time: its first bytes differed. */
function againNotice(write: (text: string) => void, colors: ReturnType<typeof pc.createColors>): EventSink {
  let started = 0;
  return {
    emit: (event) => {
      if (event.type !== 'stage.started') return;
      started += 1;
      if (started > 1) {
        write(`  ${colors.dim(`${event.stage}: its bytes differ from the cache; executing it again`)}\n`);
      }
    },
    flush: async () => {},
  };
}

import pc from 'picocolors';
import type { VerifyReport } from '../../schemas/stage-verification.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { openProjectStore, requireRun } from '../../local/open-project-store.js';
import {
  planVerification,
  type VerificationPlan,
  type VerifySelection,
} from '../verify/plan-verification.js';
import { verifyInScratch } from '../verify/verify-in-scratch.js';
import { colorEnabled } from '../render/color-enabled.js';
import { renderVerifySummary } from '../render/render-verification.js';
import { UsageError } from '../../present/terminal/usage-error.js';

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

  const { stages, cancelled } = await verifyInScratch({
    plan,
    source,
    blobs: store.state.blobs,
    io,
    write,
    colors,
  });
  if (cancelled) {
    write(`${colors.yellow('cancelled')}: ${stages.length} of ${plan.entries.length} stages verified\n`);
    return 1;
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

import type pc from 'picocolors';
import { formatParams } from '../../core/text/format.js';
import type { Params } from '../../core/params/resolve-params.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import type { StageSelection } from '../../schemas/stage-selection.js';
import type { RunReport } from '../../schemas/run-report.js';
import type { CodeIndex } from '../../runner/keys/code-index.js';
import type { StageLauncher } from '../../runner/sandbox/stage-launcher.js';
import { gitOutput } from '../../runner/workspace/git-output.js';
import { runParallelSweep } from '../../local/run-parallel-sweep.js';
import type { LocalState } from '../../local/local-state.js';
import type { LocalProject } from '../../local/locate-project.js';
import { renderRunSummary } from '../../present/terminal/run-summary.js';
import { memberStatus, SweepProgress } from '../../present/terminal/sweep-progress.js';
import type { LocalTeamCache } from '../../local/local-team-cache.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import type { CliIo } from '../../present/terminal/cli-io.js';

export interface SweepInParallelOptions {
  project: LocalProject;
  pipeline: Pipeline;
  grid: Params[];
  groupId: string;
  codeIndex: CodeIndex;
  state: LocalState;
  io: CliIo;
  /** `-j N`: things at once. */
  jobs: number;
  noCache: boolean;
  /** The stages each member runs; null: every stage. */
  selection: StageSelection | null;
  /** `--force`: stages each member re-runs even when cached. */
  force?: ReadonlySet<string>;
  launcher?: StageLauncher;
  /** `--remote-cache`: the team's cache, asked when this store misses. */
  teamCache?: LocalTeamCache;
  write: (text: string) => void;
  /** The progress goes to a terminal: the members' board is drawn. */
  live: boolean;
  colors: ReturnType<typeof pc.createColors>;
}

/**
 * `fluksio run k=a,b -j N`: the sweep's members run N at once (runParallelSweep), each
 * shown as it starts, as its stages end and with its summary as it ends, tagged with the
 * params that make it a member; on a terminal a board says what each member is doing.
 * `-j` counts things at once: up to N members, and a member's stages share what is left
 * (`-j 4` over two members: two stages of each at once). Resolves with the reports of the
 * members that ran, in grid order.
 */
export async function runSweepInParallel(options: SweepInParallelOptions): Promise<RunReport[]> {
  const { grid, pipeline, colors, write, codeIndex } = options;
  const members = Math.min(options.jobs, grid.length);
  const stagesEach = Math.max(1, Math.floor(options.jobs / members));
  const progress = new SweepProgress(
    write,
    colors,
    memberLabels(grid),
    options.selection?.stages ?? Object.keys(pipeline.stages),
    options.live,
  );
  write(
    colors.bold(
      `\nSweep ${options.groupId}: ${grid.length} runs, ${members} at once${stagesEach > 1 ? ` (${stagesEach} stages each)` : ''}\n`,
    ),
  );
  try {
    const results = await runParallelSweep({
      project: options.project,
      pipeline,
      grid,
      groupId: options.groupId,
      codeIndex,
      state: options.state,
      environment: options.io.env,
      members,
      jobs: stagesEach,
      noCache: options.noCache,
      selection: options.selection,
      ...(options.force ? { force: options.force } : {}),
      ...(options.launcher ? { launcher: options.launcher } : {}),
      ...(options.teamCache ? { teamCache: options.teamCache } : {}),
      ...(options.io.signal ? { signal: options.io.signal } : {}),
      progress: (index) => progress.member(index),
      onStart: (index, run) => progress.started(index, run.id),
      onEnd: (index, { report, detail, outcome }) =>
        progress.ended(
          index,
          memberStatus(report.run.status, colors),
          renderRunSummary(
            {
              report,
              series: detail.series,
              stages: detail.stages,
              tracebacks: outcome.tracebacks.map(({ stage, traceback }) => ({ stage, text: traceback.text })),
              outputShown: false,
            },
            colors,
          ),
        ),
    });
    return results.map((result) => result.report);
  } finally {
    progress.finish();
  }
}

/**
 * Refuses, as bad input, a sweep `-j N` cannot run in parallel here: members run in
 * scratch checkouts of HEAD, which an unborn HEAD (no commit yet) does not allow.
 */
export async function checkSweepInParallel(project: LocalProject, jobs: number): Promise<void> {
  const head = await gitOutput(project.workspace.repoRoot, ['rev-parse', '--verify', '-q', 'HEAD']).catch(
    () => null,
  );
  if (head === null) {
    throw new UsageError(
      `-j ${jobs}: a sweep's members run in scratch checkouts of HEAD, and this repository has no commit yet: commit once, or run with -j 1`,
    );
  }
}

/** Each member's params that differ between members (`lr=0.01 seed=2`), in grid order. */
function memberLabels(grid: readonly Params[]): string[] {
  const names = [...new Set(grid.flatMap((params) => Object.keys(params)))].filter(
    (name) => new Set(grid.map((params) => JSON.stringify(params[name] ?? null))).size > 1,
  );
  return grid.map((params) =>
    formatParams(
      Object.fromEntries(names.flatMap((name) => (params[name] === undefined ? [] : [[name, params[name]]]))),
    ),
  );
}

import path from 'node:path';
import { existsSync } from 'node:fs';
import pc from 'picocolors';
import { newId } from '../../core/new-id.js';
import type { Pipeline } from '../../schemas/pipeline.js';
import type { Params } from '../../core/params/resolve-params.js';
import type { RunReport } from '../../schemas/run-report.js';
import type { Run } from '../../schemas/tables/runs.js';
import type { ParsedPipelineText } from '../../core/pipeline/validate-pipeline.js';
import { readCodeIndex, type CodeIndex } from '../../runner/keys/code-index.js';
import { removeRestoreLeftovers } from '../../runner/blobs/restore-leftovers.js';
import { ParamsFileJournal } from '../../runner/params-file-journal.js';
import { InterpreterDigests } from '../../runner/keys/interpreter-digests.js';
import type { StartedLauncherProbe } from '../../runner/keys/start-launcher-probe.js';
import { startEarlyLauncherProbe } from '../../local/early-launcher-probe.js';
import { UnsafePathError } from '../../runner/workspace/unsafe-path-error.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { executeLocalRun } from '../../local/execute-local-run.js';
import { localStorePaths } from '../../local/local-store-paths.js';
import { openLocalState, type LocalState } from '../../local/local-state.js';
import { locateProject, type LocalProject } from '../../local/locate-project.js';
import { colorEnabled } from '../render/color-enabled.js';
import { ProgressPrinter } from '../../present/terminal/progress-printer.js';
import { renderRunSummary } from '../../present/terminal/run-summary.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { outputWidth } from '../render/output-width.js';
import { renderSweepTable } from '../render/sweep-table.js';
import { checkSweepInParallel, runSweepInParallel } from '../sweep/run-sweep-in-parallel.js';
import { SlurmLauncher } from '../../runner/sandbox/slurm-launcher.js';
import { slurmUnstartableGraceMs } from './slurm-unstartable-grace.js';
import type { StageLauncher } from '../../runner/sandbox/stage-launcher.js';
import { splitStageArguments, type StageRequest, type StageRequestOptions } from './stage-request.js';
import { checkRunInput } from './check-run-input.js';
import { openTeamCache } from '../remote/open-team-cache.js';
import type { LocalTeamCache } from '../../local/local-team-cache.js';

export interface RunCommandOptions extends StageRequestOptions {
  /** false with --no-cache. */
  cache: boolean;
  json: boolean;
  jobs: string;
  pipeline?: string;
  /** Where stages execute: `local` (here) or `slurm` (each a Slurm job). */
  backend: string;
  /** `--slurm-unstartable-grace`: how long a Slurm job may pend for a reason that never clears. */
  slurmUnstartableGrace?: string;
  /** Say what would run and why, running nothing (`fluksio status`). */
  dryRun?: boolean;
  /** Hand the run (or sweep) to the control plane instead, as `fluksio submit` does. */
  queue?: boolean;
  url?: string;
  /** On a miss here, ask the team's cache on the control plane (issue 13). */
  remoteCache?: boolean;
}

/**
 * `fluksio run [k=v ...]`: validates everything first (pipeline, params, paths: exit 2
 * with every problem, nothing written), then runs the pipeline here, once per point of a
 * sweep, recording runs, stages, series and cache entries in `.fluksio/`. Exit 0 when
 * every run succeeded, 1 otherwise.
 */
export async function runCommand(args: string[], options: RunCommandOptions, io: CliIo): Promise<number> {
  if (options.dryRun && options.remoteCache)
    throw new UsageError(
      "--remote-cache: --dry-run says what this store would restore; it does not ask the team's cache",
    );
  if (options.dryRun) return (await import('./status-command.js')).statusCommand(args, options, io);
  const jobs = Number(options.jobs);
  if (!Number.isInteger(jobs) || jobs < 1)
    throw new UsageError(`--jobs: "${options.jobs}" is not a whole number ≥ 1`);
  if (options.queue) return queueOnControlPlane(args, options, io);
  if (options.remoteCache && !options.cache)
    throw new UsageError('--remote-cache: --no-cache looks nothing up; leave out one of them');
  if (options.backend !== 'local' && options.backend !== 'slurm')
    throw new UsageError(`--backend: "${options.backend}" is not local or slurm`);
  const unstartableGraceMs = slurmUnstartableGraceMs(
    options.slurmUnstartableGrace,
    options.backend === 'slurm',
  );
  const project = await locateProject(options.pipeline, io.cwd);
  const launcher =
    options.backend === 'slurm'
      ? new SlurmLauncher(
          path.join(project.stateDir, 'slurm'),
          unstartableGraceMs !== undefined ? { unstartableGraceMs } : {},
        )
      : undefined;
  // The input is checked twice, before and after the store's lock is taken: the second
  // time, an unchanged pipeline file is not parsed again.
  const parses = new Map<string, ParsedPipelineText>();
  // Waiting for another run's store starts now, while the input is checked. It creates
  // nothing, so bad input still leaves no `.fluksio/` behind.
  const storeOptions = {
    onWait: (holder: string) =>
      io.stderr.write(
        `Waiting for another fluksio process (${holder}) to finish with ${project.stateDir}…\n`,
      ),
    ...(io.signal ? { signal: io.signal } : {}),
  };
  const opening = existsSync(localStorePaths(project.stateDir).journalDir)
    ? openLocalState(project.stateDir, storeOptions)
    : null;
  // Awaited once the input is checked; a wait given up meanwhile (Ctrl-C) must not end the
  // process as an unhandled rejection first.
  opening?.catch(() => {});
  const colors = pc.createColors(colorEnabled(io, options.json ? io.stderr : io.stdout));
  let teamCache: LocalTeamCache | null = null;
  try {
    const { grid } = await checkRunInput(args, project, parses, options);
    if (grid.length > 1 && jobs > 1) await checkSweepInParallel(project, jobs);
    // Asked before the store is opened: a token the control plane refuses leaves nothing behind.
    if (options.remoteCache) {
      teamCache = await openTeamCache({
        url: options.url,
        env: io.env,
        repoRoot: project.workspace.repoRoot,
        local: () => state.blobs,
        warn: (message) => io.stderr.write(`${colors.yellow('warning:')} ${message}\n`),
      });
    }
  } catch (error) {
    await opening?.then(
      (state) => state.close(),
      () => {},
    );
    throw error;
  }

  const progressOut = options.json ? (io.stderr.isTTY ? io.stderr : null) : io.stdout;
  const write = (text: string) => progressOut?.write(text);
  const state = await (opening ?? openLocalState(project.stateDir, storeOptions));
  // The pipeline and the code are what they are once no other run holds the store: one
  // that ran while this one waited for the lock may have changed both (issue 8, defect 1).
  let pipeline: Pipeline;
  let grid: Params[];
  let notes: string[];
  let request: StageRequest;
  let codeIndex: CodeIndex;
  let early: EarlyRun | null = null;
  try {
    // A run killed outright here (SIGKILL) may have left a stage's values in a DVC params
    // file: put back before the tree is read, for this run to see what the user wrote.
    const putBack = await new ParamsFileJournal(project.workspace.pipelineDir).putBack(
      project.workspace.repoRoot,
    );
    for (const file of putBack.restored) {
      io.stderr.write(`${path.relative(io.cwd, file)}: put back as it was before an interrupted run\n`);
    }
    for (const file of putBack.keptEdited) {
      io.stderr.write(
        `${path.relative(io.cwd, file)}: an interrupted run wrote params into it, and it was edited since; left as it is\n`,
      );
    }
    ({ pipeline, grid, notes, request } = await checkRunInput(args, project, parses, options));
    // A single run's (or a sweep's first, one member at a time) Python launchers are asked
    // which interpreter they start now, while the tree is read and the run recorded.
    const [first] = grid;
    if (first && !(grid.length > 1 && jobs > 1)) {
      const interpreterDigests = new InterpreterDigests(
        path.join(project.stateDir, 'interpreter-digests.json'),
      );
      const started = await startEarlyLauncherProbe({
        workspace: project.workspace,
        pipeline,
        stages: request.selection?.stages ?? Object.keys(pipeline.stages),
        params: first,
        environment: io.env,
        ...(launcher ? { launcher } : {}),
        digests: interpreterDigests,
      });
      early = { interpreterDigests, launchers: started };
    }
    // A run killed while it restored an out left its partial copy beside it: removed
    // before the tree is read, or it would count as code and make this run dirty.
    await removeRestoreLeftovers(project.workspace, pipeline);
    codeIndex = await readCodeIndex(project.workspace.repoRoot);
  } catch (error) {
    await early?.launchers.close();
    await state.close();
    throw error;
  }
  // What a dvc.yaml asks that fluksio cannot honour, named before anything runs.
  for (const note of notes) io.stderr.write(`${colors.yellow('not honoured:')} ${note}\n`);
  try {
    const groupId = grid.length > 1 ? newId() : null;
    const reports: RunReport[] = [];
    // Every member of a sweep is compared with the run its first member was: never with
    // another member (DESIGN §7).
    let sweepBaseline: { run: Run | null } | undefined;
    // `-j N` is N things at once: a sweep's members, or a single run's stages.
    const parallelSweep = groupId !== null && jobs > 1;
    if (parallelSweep) {
      reports.push(
        ...(await runSweepInParallel({
          project,
          pipeline,
          grid,
          groupId,
          codeIndex,
          state,
          io,
          jobs,
          noCache: !options.cache,
          selection: request.selection,
          ...(request.force ? { force: request.force } : {}),
          ...(launcher ? { launcher } : {}),
          ...(teamCache ? { teamCache } : {}),
          write,
          live: Boolean(progressOut?.isTTY),
          colors,
        })),
      );
    }
    for (const [index, params] of (parallelSweep ? [] : grid).entries()) {
      if (io.signal?.aborted) break;
      if (groupId) write(colors.bold(`\nSweep ${groupId}: run ${index + 1} of ${grid.length}\n`));
      // The previous run of the sweep executed stages: the tree is read again for this one.
      if (index > 0) codeIndex = await readCodeIndex(project.workspace.repoRoot);
      const { report, baseline } = await runOnce({
        project,
        pipeline,
        params,
        codeIndex,
        state,
        io,
        jobs,
        noCache: !options.cache,
        request,
        ...(launcher ? { launcher } : {}),
        ...(teamCache ? { teamCache } : {}),
        groupId,
        groupIndex: groupId ? index : null,
        write,
        live: Boolean(progressOut?.isTTY),
        columns: outputWidth(progressOut ?? {}, io.env),
        colors,
        sweepBaseline,
        ...(index === 0 && early ? { early } : {}),
      });
      if (groupId) sweepBaseline ??= { run: baseline };
      reports.push(report);
    }
    if (groupId && reports.length > 1) {
      write(
        `\n${renderSweepTable({ groupId, reports, goals: pipeline.metrics, width: outputWidth(progressOut ?? {}, io.env), colors })}`,
      );
    }
    if (options.json) {
      const output = groupId ? { group: groupId, runs: reports } : reports[0];
      io.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
    }
    return reports.length === grid.length && reports.every((report) => report.run.status === 'succeeded')
      ? 0
      : 1;
  } catch (error) {
    // The stamp's code digest refuses a code symlink leading outside the repository
    // before the first run is recorded: bad input, like a dep that does the same.
    if (error instanceof UnsafePathError) throw new UsageError(error.message, { cause: error });
    throw error;
  } finally {
    await early?.launchers.close();
    await state.close();
  }
}

/**
 * `fluksio run --queue`: the same as `fluksio submit` with the same params (the control
 * plane at FLUKSIO_URL or --url runs this repository's pushed HEAD); nothing runs here.
 */
async function queueOnControlPlane(args: string[], options: RunCommandOptions, io: CliIo): Promise<number> {
  if (options.backend !== 'local')
    throw new UsageError(`--queue: the control plane's runners choose where stages run; leave out --backend`);
  const { stages } = splitStageArguments(args);
  if (stages.length > 0 || options.downstream || options.force)
    throw new UsageError(
      `--queue: the control plane runs every stage; leave out ${stages.length > 0 ? `the stage names (${stages.join(', ')})` : options.downstream ? '--downstream' : '--force'}, or run here without --queue`,
    );
  const { submitCommand } = await import('./submit-command.js');
  return submitCommand(
    args,
    {
      cache: options.cache,
      json: options.json,
      ...(options.pipeline ? { pipeline: options.pipeline } : {}),
      ...(options.url ? { url: options.url } : {}),
    },
    io,
  );
}

/** What a run starts before its tree is read (startEarlyLauncherProbe), and hands to the run. */
interface EarlyRun {
  interpreterDigests: InterpreterDigests;
  launchers: StartedLauncherProbe;
}

interface RunOnceOptions {
  project: LocalProject;
  pipeline: Pipeline;
  params: Params;
  codeIndex: CodeIndex;
  state: LocalState;
  io: CliIo;
  jobs: number;
  noCache: boolean;
  request: StageRequest;
  launcher?: StageLauncher;
  teamCache?: LocalTeamCache;
  groupId: string | null;
  groupIndex: number | null;
  write: (text: string) => void;
  /** The progress goes to a terminal: the running stages' elapsed time is shown. */
  live: boolean;
  /** That terminal's width, which a stage's redrawn progress bar stays within. */
  columns: number;
  /** A sweep member after the first: the sweep's baseline. */
  sweepBaseline: { run: Run | null } | undefined;
  /** What was started for this run before the tree was read. @defaultValue nothing */
  early?: EarlyRun;
  colors: ReturnType<typeof pc.createColors>;
}

async function runOnce(options: RunOnceOptions): Promise<{ report: RunReport; baseline: Run | null }> {
  const { project, pipeline, io, write, colors } = options;
  const { report, detail, outcome, baseline } = await executeLocalRun({
    project,
    pipeline,
    params: options.params,
    codeIndex: options.codeIndex,
    state: options.state,
    environment: io.env,
    jobs: options.jobs,
    noCache: options.noCache,
    selection: options.request.selection,
    ...(options.request.force ? { force: options.request.force } : {}),
    ...(options.launcher ? { launcher: options.launcher } : {}),
    ...(options.teamCache ? { teamCache: options.teamCache } : {}),
    groupId: options.groupId,
    groupIndex: options.groupIndex,
    progress: new ProgressPrinter(
      write,
      colors,
      options.request.selection?.stages ?? Object.keys(pipeline.stages),
      true,
      options.live,
      options.columns,
    ),
    ...(io.signal ? { signal: io.signal } : {}),
    ...(options.sweepBaseline ? { sweepBaseline: options.sweepBaseline } : {}),
    ...(options.early
      ? {
          interpreterDigests: options.early.interpreterDigests,
          probeLauncher: options.early.launchers.probe,
        }
      : {}),
    onStart: ({ id, stamp }) =>
      write(
        `${colors.bold('fluksio run')} ${id}  ${colors.dim(`${project.pipelinePath} · ${stamp.commit ? stamp.commit.slice(0, 10) : 'no commit'}${stamp.dirty ? ' (dirty)' : ''}`)}\n`,
      ),
  });
  write(
    renderRunSummary(
      {
        report,
        series: detail.series,
        stages: detail.stages,
        tracebacks: outcome.tracebacks.map(({ stage, traceback }) => ({ stage, text: traceback.text })),
        outputShown: true,
      },
      colors,
    ),
  );
  return { report, baseline };
}

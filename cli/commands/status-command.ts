import pc from 'picocolors';
import { formatParams } from '../../core/text/format.js';
import type { Params } from '../../core/params/resolve-params.js';
import type { StagePlan } from '../../schemas/stage-plan.js';
import type { StageSelection } from '../../schemas/stage-selection.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { planLocalRun } from '../../local/plan-local-run.js';
import { locateProject } from '../../local/locate-project.js';
import { readCodeIndex } from '../../runner/keys/code-index.js';
import { UnsafePathError } from '../../runner/workspace/unsafe-path-error.js';
import { colorEnabled } from '../render/color-enabled.js';
import { fitTable } from '../render/fit-table.js';
import { outputWidth } from '../render/output-width.js';
import { renderStagePlanTable } from '../render/stage-plan-table.js';
import { checkRunInput } from './check-run-input.js';
import type { StageRequestOptions } from './stage-request.js';

export interface StatusCommandOptions extends StageRequestOptions {
  /** false with --no-cache. */
  cache: boolean;
  json?: boolean;
  pipeline?: string;
}

/** What `fluksio status --json` prints for one parameter set (a sweep prints `{runs: [...]}`). */
interface StatusJson {
  pipelinePath: string;
  params: Params;
  selection: StageSelection | null;
  /** Each stage's plan, with what it does as the pipeline describes it (DVC's `desc`). */
  stages: (StagePlan & { description: string | null })[];
}

/**
 * `fluksio status [STAGE…] [k=v…]` (and `fluksio run --dry-run`): the input is checked as
 * `fluksio run` checks it (exit 2 with every problem), then each stage of the run it would
 * make is said to run or be restored, and why — for each member of a sweep. Nothing is
 * executed but the pipeline's fingerprint command, nothing is recorded, and the store is
 * read without its lock. Exit 0.
 */
export async function statusCommand(
  args: string[],
  options: StatusCommandOptions,
  io: CliIo,
): Promise<number> {
  const project = await locateProject(options.pipeline, io.cwd);
  const { pipeline, grid, notes, request } = await checkRunInput(args, project, new Map(), options);
  const colors = pc.createColors(colorEnabled(io, options.json ? io.stderr : io.stdout));
  for (const note of notes) io.stderr.write(`${colors.yellow('not honoured:')} ${note}\n`);
  const results: StatusJson[] = [];
  try {
    const codeIndex = await readCodeIndex(project.workspace.repoRoot);
    for (const params of grid) {
      const stages = await planLocalRun({
        project,
        pipeline,
        params,
        codeIndex,
        environment: io.env,
        noCache: !options.cache,
        selection: request.selection,
        ...(request.force ? { force: request.force } : {}),
      });
      results.push({
        pipelinePath: project.pipelinePath,
        params,
        selection: request.selection,
        stages: stages.map((plan) => ({
          ...plan,
          description: pipeline.stages[plan.name]?.description ?? null,
        })),
      });
    }
  } catch (error) {
    if (error instanceof UnsafePathError) throw new UsageError(error.message, { cause: error });
    throw error;
  }
  if (options.json) {
    io.stdout.write(`${JSON.stringify(results.length === 1 ? results[0] : { runs: results }, null, 2)}\n`);
    return 0;
  }
  const width = outputWidth(io.stdout, io.env);
  for (const [index, result] of results.entries()) {
    const which = results.length > 1 ? ` (run ${index + 1} of ${results.length})` : '';
    const stamp = fitTable({
      head: ['pipeline', 'params'],
      rows: [[project.displayPath, formatParams(result.params) || '(none)']],
      width,
    });
    io.stdout.write(
      `${index > 0 ? '\n' : ''}${colors.bold(`fluksio status${which}`)}\n${colors.dim(stamp)}\n`,
    );
    if (result.selection) {
      const asked = `${result.selection.named.join(' ')}${result.selection.downstream ? ' --downstream' : ''}`;
      io.stdout.write(colors.dim(`stages of ${asked}: a partial run, never a baseline\n`));
    }
    io.stdout.write(renderStagePlanTable(result.stages, { width, colors }));
  }
  return 0;
}

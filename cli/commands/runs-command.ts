import { experimentColumns } from '../../core/experiments/experiment-columns.js';
import type { ExperimentRun } from '../../core/experiments/experiment-run.js';
import { selectRuns } from '../../core/experiments/select-runs.js';
import { RunFilter } from '../../schemas/run-filter.js';
import { RunSort } from '../../schemas/run-sort.js';
import { RUN_LIST_MAX } from '../../schemas/protocol/run-list.js';
import type { MetricGoals } from '../../schemas/metric-diff.js';
import { listRuns } from '../../store/runs/list-runs.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { openProjectStore } from '../../local/open-project-store.js';
import { NoRunsYetError } from '../../local/no-runs-yet-error.js';
import { UsageError } from '../../present/terminal/usage-error.js';
import { outputWidth } from '../render/output-width.js';
import { renderRunsCsv } from '../render/runs-csv.js';
import { renderRunsMarkdown } from '../render/runs-markdown.js';
import { renderRunsTable } from '../render/runs-table.js';
import { wrapToWidth } from '../render/wrap-to-width.js';

export interface RunsCommandOptions {
  limit: string;
  json?: boolean;
  /** `--md`: a GitHub-flavoured markdown table. */
  md?: boolean;
  /** `--csv`: RFC 4180 CSV. */
  csv?: boolean;
  /** `--all`: every param and metric, not only those that differ between the runs. */
  all?: boolean;
  /** `--sort NAME` (`-NAME` descending). */
  sort?: string;
  desc?: boolean;
  asc?: boolean;
  /** `--filter EXPR`, repeatable. */
  filter?: string[];
  pipeline?: string;
  /** `--remote`: the control plane's runs of this repository (FLUKSIO_URL). */
  remote?: boolean;
  /** `--url`: the control plane's runs at this URL. */
  url?: string;
}

/**
 * `fluksio runs`: this pipeline's runs as an experiment table, newest first (or sorted),
 * filtered, with a column for each param and metric that tells them apart; with
 * `--remote`, the control plane's runs of this repository. `--json` prints the runs
 * selected; `--md` and `--csv` the table.
 */
export async function runsCommand(options: RunsCommandOptions, io: CliIo): Promise<number> {
  const selection = readSelection(options);
  // Filtering and sorting look at every run (remote: the newest RUN_LIST_MAX), then keep `limit`.
  const narrowed = selection.filters.length > 0 || selection.sort !== null;
  if (options.remote || options.url !== undefined) {
    const [{ listRemoteRuns }, { localGoals }] = await Promise.all([
      import('../remote/list-remote-runs.js'),
      import('../remote/local-goals.js'),
    ]);
    const listed = await listRemoteRuns(
      { limit: narrowed ? RUN_LIST_MAX : selection.limit, url: options.url, pipeline: options.pipeline },
      io,
    );
    if (listed.repository !== null && !options.json && !options.md && !options.csv) {
      const pipeline = listed.pipelinePath ?? 'every pipeline';
      const title = `Runs of ${listed.repository} (${pipeline}) on ${listed.url}`;
      io.stdout.write(`${wrapToWidth(title, outputWidth(io.stdout, io.env))}\n`);
    }
    return printRuns(
      listed.runs,
      { ...selection, goals: await localGoals(options.pipeline, io.cwd) },
      options,
      io,
    );
  }
  const store = await openProjectStore(options.pipeline, io).catch((error: unknown) => {
    if (error instanceof NoRunsYetError) return error;
    throw error;
  });
  if (store instanceof NoRunsYetError) {
    // A project that never ran has no runs: a script reading --json gets [], a person the way on.
    if (options.json || options.md || options.csv)
      return printRuns([], { ...selection, goals: {} }, options, io);
    io.stdout.write(`${store.message}\n`);
    return 0;
  }
  try {
    const runs = await listRuns({
      db: store.state.db,
      pipelinePath: store.project.pipelinePath,
      ...(narrowed ? {} : { limit: selection.limit }),
    });
    return printRuns(runs, { ...selection, goals: store.goals }, options, io);
  } finally {
    await store.state.close();
  }
}

/** The flags as a selection, every problem with them at once (exit 2). */
function readSelection(options: RunsCommandOptions) {
  const problems: string[] = [];
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1)
    problems.push(`--limit: "${options.limit}" is not a whole number ≥ 1`);
  const formats = (['json', 'md', 'csv'] as const).filter((name) => options[name]);
  if (formats.length > 1) problems.push(`--${formats.join(', --')}: choose one output format`);
  if (options.desc && options.asc) problems.push('--desc and --asc: choose one direction');
  const filters: RunFilter[] = [];
  for (const text of options.filter ?? []) {
    const parsed = RunFilter.safeParse(text);
    if (parsed.success) filters.push(parsed.data);
    else problems.push(`--filter ${parsed.error.issues.map((issue) => issue.message).join('; ')}`);
  }
  let sort: RunSort | null = null;
  if (options.sort !== undefined) {
    const parsed = RunSort.safeParse(options.sort);
    if (parsed.success) sort = parsed.data;
    else
      problems.push(
        `--sort "${options.sort}": ${parsed.error.issues.map((issue) => issue.message).join('; ')}`,
      );
  }
  if (sort === null && (options.desc || options.asc))
    problems.push(`--${options.desc ? 'desc' : 'asc'}: give --sort NAME too`);
  if (sort?.descending && options.asc) problems.push(`--sort -${sort.name} with --asc: choose one direction`);
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  return { filters, sort, limit, descending: options.desc ? true : options.asc ? false : null };
}

/** Selects, then prints in the format asked for. */
function printRuns<T extends ExperimentRun>(
  runs: readonly T[],
  selection: Parameters<typeof selectRuns>[1] & { goals: MetricGoals },
  options: RunsCommandOptions,
  io: CliIo,
): number {
  const selected = selectRuns(runs, selection);
  if (selected.problems.length > 0) throw new UsageError(selected.problems.join('\n'));
  if (options.json) {
    io.stdout.write(`${JSON.stringify(selected.runs, null, 2)}\n`);
    return 0;
  }
  const columns = experimentColumns(selected.runs, { all: Boolean(options.all), goals: selection.goals });
  io.stdout.write(
    options.md
      ? renderRunsMarkdown(selected.runs, columns)
      : options.csv
        ? renderRunsCsv(selected.runs, columns)
        : renderRunsTable(selected.runs, columns, outputWidth(io.stdout, io.env)),
  );
  return 0;
}

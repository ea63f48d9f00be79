import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { sep } from 'node:path';
import { posix } from 'node:path';
import type { MetricPoint } from '../../schemas/metric-point.js';
import type { PlotSpec } from '../../schemas/plot-spec.js';
import { normalizePipelinePath } from '../../core/pipeline/pipeline-paths.js';
import { parsePlotTable, plotFormatOf, PlotTableError } from '../../core/plots/parse-plot-table.js';
import { plotSeries } from '../../core/plots/plot-series.js';
import { messageOf } from '../../core/text/message-of.js';

/** What a stage's plot files gave: its points, and a warning for each file that gave none. */
export interface PlotSeriesResult {
  points: MetricPoint[];
  warnings: string[];
}

/** A plot file larger than this is not read (it is still an out). */
const MAX_PLOT_BYTES = 32 * 1024 * 1024;

/**
 * Reads a stage's plot files, once it ran, into metric points of `stage` (the series its
 * `::metric` lines would give): each spec's file, or every data file (CSV, TSV, JSON,
 * YAML) under its folder, by name. Only files inside `repoRoot` are read (a symlink
 * leading out is not followed). A file that is missing, outside, too large or cannot be
 * read as series gives a warning naming it, never an error: the stage still succeeds.
 * Two files giving one series name: the first keeps it, and the second is warned of.
 */
export async function readPlotSeries(
  specs: readonly PlotSpec[],
  where: { pipelineDir: string; repoRoot: string },
  stage: string,
): Promise<PlotSeriesResult> {
  const { pipelineDir } = where;
  const root = await realpath(where.repoRoot);
  const points: MetricPoint[] = [];
  const warnings: string[] = [];
  const seriesFrom = new Map<string, string>();
  for (const spec of specs) {
    let files: string[];
    try {
      files = await plotFiles(pipelineDir, normalizePipelinePath(spec.path), root);
    } catch (error) {
      warnings.push(`plot ${spec.path} cannot be read: ${messageOf(error)}`);
      continue;
    }
    for (const file of files) {
      const format = plotFormatOf(file);
      if (format === null) continue;
      try {
        const real = await realpath(posix.join(pipelineDir, file));
        if (!real.startsWith(root + sep)) throw new PlotTableError('leads outside the repository');
        const size = (await stat(real)).size;
        if (size > MAX_PLOT_BYTES) {
          throw new PlotTableError(`is ${size} bytes; at most ${MAX_PLOT_BYTES} are read as series`);
        }
        const text = await readFile(real, 'utf8');
        const fields = [spec.x, ...(spec.y ?? [])].filter((field) => field !== undefined);
        const table = parsePlotTable(text, format, {
          fields,
          ...(spec.header === false ? { header: false } : {}),
        });
        for (const series of plotSeries(table, spec, file)) {
          const earlier = seriesFrom.get(series.name);
          if (earlier !== undefined) {
            if (earlier !== file)
              warnings.push(
                `plot file ${file}: series ${series.name} is already read from ${earlier}; skipped`,
              );
            continue;
          }
          seriesFrom.set(series.name, file);
          for (const point of series.points) points.push({ stage, name: series.name, ...point });
        }
      } catch (error) {
        warnings.push(`plot file ${file} gives no series: ${messageOf(error)}`);
      }
    }
  }
  return { points, warnings };
}

/** Files of one plot folder read at most; past this the folder is not read. */
const MAX_PLOT_FILES = 1_000;

/**
 * The pipeline-relative plot files at `path`: the file itself, or a folder's files in
 * order. A folder is listed only when it lies inside `root` once its links are resolved
 * (a stage could link it to `/`), and never through a link below it.
 */
async function plotFiles(pipelineDir: string, path: string, root: string): Promise<string[]> {
  const absolute = posix.join(pipelineDir, path);
  const info = await stat(absolute).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') throw new Error('the stage did not write it');
    throw error;
  });
  if (!info.isDirectory()) return [path];
  const real = await realpath(absolute);
  if (!real.startsWith(root + sep)) throw new Error('leads outside the repository');
  const entries = await readdir(real, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => posix.join(path, posix.relative(real, entry.parentPath), entry.name))
    .filter((file) => plotFormatOf(file) !== null);
  if (files.length > MAX_PLOT_FILES) {
    throw new Error(`holds ${files.length} plot files; at most ${MAX_PLOT_FILES} are read`);
  }
  return files.sort();
}

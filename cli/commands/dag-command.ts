import pc from 'picocolors';
import { stageDag } from '../../core/pipeline/stage-dag.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { stageDagMermaid } from '../../present/github/stage-dag-mermaid.js';
import { locateProject, readProjectSource } from '../../local/locate-project.js';
import { colorEnabled } from '../render/color-enabled.js';
import { outputWidth } from '../render/output-width.js';
import { renderStageDagTable } from '../render/stage-dag-table.js';
import { UsageError } from '../../present/terminal/usage-error.js';

export interface DagCommandOptions {
  mermaid?: boolean;
  /** The Mermaid flowchart in a ```mermaid fence. */
  md?: boolean;
  json?: boolean;
  pipeline?: string;
}

/**
 * `fluksio dag`: the pipeline's stage graph (a fluksio.yml or a dvc.yaml) as a layered
 * table, a Mermaid flowchart (`--mermaid`, `--md`) or `{nodes, edges}` (`--json`). Reads
 * the pipeline only: no store, no git state beyond finding the repository.
 */
export async function dagCommand(options: DagCommandOptions, io: CliIo): Promise<number> {
  // --md is --mermaid fenced, so those two go together; JSON goes with neither.
  const drawn = (['md', 'mermaid'] as const).filter((format) => options[format]);
  if (options.json && drawn.length > 0)
    throw new UsageError(`--json, --${drawn[0]}: choose one output format`);
  const project = await locateProject(options.pipeline, io.cwd);
  const { pipeline } = await readProjectSource(project);
  const dag = stageDag(pipeline);
  if (options.json) io.stdout.write(`${JSON.stringify(dag, null, 2)}\n`);
  else if (options.mermaid || options.md)
    io.stdout.write(stageDagMermaid(dag, { fenced: Boolean(options.md) }));
  else {
    const colors = pc.createColors(colorEnabled(io, io.stdout));
    io.stdout.write(
      renderStageDagTable(dag, {
        title: project.displayPath,
        width: outputWidth(io.stdout, io.env),
        colors,
      }),
    );
  }
  return 0;
}

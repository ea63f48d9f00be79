import type { Colors } from 'picocolors/types.js';
import type { StageDag } from '../../core/pipeline/stage-dag.js';
import { fitTable } from './fit-table.js';

/**
 * The stage graph on a terminal, one line a stage in layers: a stage's layer is one more
 * than that of the deepest stage it needs, so reading down follows the data, and what one
 * layer holds can run at once. Each stage names the stages it needs, what it makes and,
 * when the pipeline describes any stage (DVC's `desc`), what it does; the table holds
 * within `width` (what it makes is left out first, then the descriptions).
 */
export function renderStageDagTable(
  dag: StageDag,
  { title, width, colors }: { title: string; width: number; colors: Colors },
): string {
  const needs = new Map<string, string[]>();
  for (const edge of dag.edges) needs.set(edge.to, [...(needs.get(edge.to) ?? []), edge.from]);
  const nodes = [...dag.nodes].sort((a, b) => a.layer - b.layer);
  const described = nodes.some((node) => node.description !== null);
  const table = fitTable({
    head: ['layer', 'stage', 'needs', 'makes', ...(described ? ['description'] : [])],
    rows: nodes.map((node) => [
      String(node.layer),
      colors.bold(node.name),
      (needs.get(node.name) ?? []).join(', ') || colors.dim('–'),
      [...node.outs, ...node.metrics].join(', ') || colors.dim('–'),
      ...(described ? [node.description ?? colors.dim('–')] : []),
    ]),
    width,
    droppable: ['makes', 'description'],
  });
  const count = `${dag.nodes.length} ${dag.nodes.length === 1 ? 'stage' : 'stages'}`;
  return `${colors.bold(title)}  ${colors.dim(`${count}, ${dag.edges.length} ${dag.edges.length === 1 ? 'edge' : 'edges'}`)}\n${table}\n`;
}

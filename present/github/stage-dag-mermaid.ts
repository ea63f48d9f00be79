import type { StageDag } from '../../core/pipeline/stage-dag.js';

/**
 * The stage graph as a Mermaid `flowchart` (top to bottom), which GitHub renders in
 * READMEs, issues and pull requests; `fenced` wraps it in a ```mermaid block. Node ids are
 * made up (`s0`, `s1`…) since stage names such as `train@small` are not Mermaid ids; the
 * names are quoted labels, with `"` written as Mermaid's `#quot;`.
 */
export function stageDagMermaid(dag: StageDag, { fenced = false }: { fenced?: boolean } = {}): string {
  const ids = new Map(dag.nodes.map((node, index) => [node.name, `s${index}`]));
  const lines = [
    'flowchart TD',
    ...dag.nodes.map((node) => `  ${ids.get(node.name)}["${node.name.replaceAll('"', '#quot;')}"]`),
    ...dag.edges.map((edge) => `  ${ids.get(edge.from)} --> ${ids.get(edge.to)}`),
  ];
  const chart = `${lines.join('\n')}\n`;
  return fenced ? `\`\`\`mermaid\n${chart}\`\`\`\n` : chart;
}

/**
 * One thing wrong with an input: where (`stages.train.params[2]`) and what, as a sentence.
 * Validators collect every problem instead of stopping at the first (STYLE habit 5).
 */
export interface Problem {
  /** Dotted path into the input, with `[i]` for list items; empty for the input as a whole. */
  path: string;
  message: string;
  /** 1-based line in the source file, when the input was a file and the place is known. */
  line?: number;
}

/** Formats problems the way every surface prints them: `file: path: message`, one per line. */
export function formatProblems(problems: readonly Problem[], source?: string): string {
  return problems
    .map((problem) => {
      const where = source && problem.line ? `${source}:${problem.line}` : source;
      return [where, problem.path, problem.message].filter((part) => part).join(': ');
    })
    .join('\n');
}

/** Renders a property path the way users write it: `stages.train.params[2]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`;
    else text += text ? `.${String(part)}` : String(part);
  }
  return text;
}

import { isNode, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { checkPipelineRules, type PipelineContext } from './pipeline-rules.js';
import { Pipeline } from '../../schemas/pipeline.js';
import { formatPath, type Problem } from '../problem.js';

export interface PipelineValidation {
  /** The pipeline with defaults filled in, or null when anything is wrong. */
  pipeline: Pipeline | null;
  /** Every problem at once, each with its path in the file and its line. */
  problems: Problem[];
}

/**
 * Reads a `fluksio.yml` text and checks it completely: YAML syntax, the schema, then
 * the rules that need the whole file (DESIGN §3: interpolation, unknown params,
 * paths, duplicate outs, cycles, deps that exist). Returns all problems at once.
 */
export function validatePipeline(text: string, context: PipelineContext): PipelineValidation {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    return {
      pipeline: null,
      problems: document.errors.map((error) => ({
        path: '',
        message: `YAML syntax error: ${error.message.split('\n')[0]}`,
        line: lineCounter.linePos(error.pos[0]).line,
      })),
    };
  }
  const parsed = Pipeline.safeParse(document.toJS() ?? {});
  const lineOf = (path: readonly PropertyKey[]) => lineOfPath(document, lineCounter, path);
  if (!parsed.success) {
    return {
      pipeline: null,
      problems: parsed.error.issues.map((issue) => toProblem(issue, lineOf)),
    };
  }
  const problems = checkPipelineRules(parsed.data, context).map((problem) => ({
    ...problem,
    line: lineOf(problem.path.split(/\.|\[(\d+)\]/).filter((part) => part)),
  }));
  return problems.length > 0 ? { pipeline: null, problems } : { pipeline: parsed.data, problems: [] };
}

function toProblem(
  issue: z.core.$ZodIssue,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): Problem {
  const path = issue.path;
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    message = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => `"${key}"`).join(', ')}`;
  } else if (issue.code === 'invalid_key') {
    message = `"${String(path.at(-1))}" is not a valid name: ${issue.issues.map((inner) => inner.message).join('; ')}`;
  } else if (issue.code === 'invalid_type' && /received undefined/.test(issue.message)) {
    message = `is required (${issue.message.replace(/^Invalid input: /, '').replace(/, received undefined$/, '')})`;
  } else {
    message = message.replace(/^Invalid input: /, '');
  }
  return { path: formatPath(path), message, line: lineOf(path) };
}

/** The 1-based line of the node at `path`, or of its nearest existing parent. */
function lineOfPath(
  document: Document,
  lineCounter: LineCounter,
  path: readonly PropertyKey[],
): number | undefined {
  for (let length = path.length; length >= 0; length -= 1) {
    const keys = path
      .slice(0, length)
      .map((key) => (typeof key === 'string' && /^\d+$/.test(key) ? Number(key) : key));
    const node = document.getIn(keys, true);
    if (isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line;
  }
  return undefined;
}

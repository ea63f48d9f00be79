import { isNode, LineCounter, type Document } from 'yaml';
import type { z } from 'zod';
import { checkPipelineRules, type PipelineContext } from './pipeline-rules.js';
import { Pipeline, Stage } from '../../schemas/pipeline.js';
import { formatPath, type Problem } from '../problem.js';
import { closestKey } from '../text/closest-key.js';
import { ONE_SHOT_PARSE } from '../../schemas/one-shot-parse.js';
import { unstorablePaths } from '../text/storable-text.js';
import { parseYamlDocument } from '../text/parse-yaml-document.js';
import { yamlValue } from '../text/yaml-value.js';

export interface PipelineValidation {
  /** The pipeline with defaults filled in, or null when anything is wrong. */
  pipeline: Pipeline | null;
  /** Every problem at once, each with its path in the file and its line. */
  problems: Problem[];
}

/**
 * A pipeline text read as YAML and by the schema: everything validatePipeline checks
 * that depends on the text alone. Problems found here end the check; a valid one still
 * has the rules that look at the repository to pass.
 */
export type ParsedPipelineText =
  | { problems: Problem[] }
  | { problems: null; pipeline: Pipeline; lineOf(path: readonly PropertyKey[]): number | undefined };

/**
 * Reads a `fluksio.yml` text and checks it completely: YAML syntax, the schema, then
 * the rules that need the whole file (DESIGN §3: interpolation, unknown params,
 * paths, duplicate outs, cycles, deps that exist). Returns all problems at once.
 * `parses` keeps each text's parse: a text checked again (as `fluksio run` does once it
 * holds the store) only has its rules checked again, against the repository as it is now.
 */
export function validatePipeline(
  text: string,
  context: PipelineContext,
  parses?: Map<string, ParsedPipelineText>,
): PipelineValidation {
  let parsed = parses?.get(text);
  if (parsed === undefined) {
    parsed = parsePipelineText(text);
    parses?.set(text, parsed);
  }
  if (parsed.problems !== null) return { pipeline: null, problems: parsed.problems };
  const { pipeline, lineOf } = parsed;
  const problems = checkPipelineRules(pipeline, context).map((problem) => ({
    ...problem,
    line: lineOf(problem.path.split(/\.|\[(\d+)\]/).filter((part) => part)),
  }));
  return problems.length > 0 ? { pipeline: null, problems } : { pipeline, problems: [] };
}

function parsePipelineText(text: string): ParsedPipelineText {
  const lineCounter = new LineCounter();
  const document = parseYamlDocument(text, { lineCounter, prettyErrors: false });
  if (document.errors.length > 0) {
    return {
      problems: document.errors.map((error) => ({
        path: '',
        message: `YAML syntax error: ${error.message.split('\n')[0]}`,
        line: lineCounter.linePos(error.pos[0]).line,
      })),
    };
  }
  const read = yamlValue(document);
  if ('problem' in read) return { problems: [{ path: '', message: read.problem, line: 1 }] };
  const input = read.value;
  const lineOf = (path: readonly PropertyKey[]) => lineOfPath(document, lineCounter, path);
  const unstorable = unstorablePaths(input);
  if (unstorable.length > 0) {
    return {
      problems: unstorable.map((path) => ({
        path: formatPath(path),
        message:
          'holds a NUL character (\\0) or an unpaired UTF-16 surrogate, which fluksio cannot store: remove it',
        line: lineOf(path),
      })),
    };
  }
  const parsed = Pipeline.safeParse(input, ONE_SHOT_PARSE);
  if (!parsed.success)
    return { problems: parsed.error.issues.map((issue) => toProblem(issue, input, lineOf)) };
  return { problems: null, pipeline: parsed.data, lineOf };
}

function toProblem(
  issue: z.core.$ZodIssue,
  input: unknown,
  lineOf: (path: readonly PropertyKey[]) => number | undefined,
): Problem {
  const path = issue.path;
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeysAt(path);
    message = `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys
      .map((key) => {
        const meant = closestKey(key, known);
        return meant ? `"${key}" (did you mean "${meant}"?)` : `"${key}"`;
      })
      .join(', ')}`;
  } else if (issue.code === 'invalid_key') {
    message = `"${String(path.at(-1))}" is not a valid name: ${issue.issues.map((inner) => inner.message).join('; ')}`;
  } else if (issue.code === 'invalid_type') {
    const expected = describeType(issue.expected);
    // What the file holds there, not what the message says: a schema's own message names no type.
    const value = valueAt(input, path);
    message =
      value === undefined
        ? `is missing: write ${expected} here`
        : `is ${describeType(typeOfValue(value))}, but must be ${expected}`;
  } else {
    message = message.replace(/^Invalid input: /, '');
  }
  return { path: formatPath(path), message, line: lineOf(path) };
}

/** The keys the file may hold where a key was not recognised: the pipeline's and a stage's. */
function knownKeysAt(path: readonly PropertyKey[]): string[] {
  if (path.length === 0) return Object.keys(Pipeline.shape);
  if (path.length === 2 && path[0] === 'stages') return Object.keys(Stage.shape);
  return [];
}

/** The value at `path` in what the YAML parsed to; undefined when there is none. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

/** A parsed YAML value's type, in zod's words. */
function typeOfValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/** Zod's name of a type as a YAML author reads it. */
const TYPE_WORDS: Record<string, string> = {
  record: 'a mapping (name: value, one per line)',
  object: 'a mapping (key: value, one per line)',
  array: 'a list ([a, b] or "- a" lines)',
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  null: 'empty (null)',
};

function describeType(name: string): string {
  return TYPE_WORDS[name] ?? name;
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

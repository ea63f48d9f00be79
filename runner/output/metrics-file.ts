import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { jsonSyntaxError } from '../../core/text/json-syntax-error.js';

/**
 * Reads a stage's metrics file into flat metric values (DESIGN §7): JSON for `.json`,
 * YAML for `.yml`/`.yaml`, otherwise JSON and then YAML. Nested objects flatten to
 * dotted names (`eval.acc`) and arrays to indexes (`scores.0`); only finite numbers
 * count — booleans, strings, nulls, NaN and infinities are left out. A file that is
 * missing, malformed or not an object throws an Error naming `displayPath` (the path a
 * user wrote in `fluksio.yml`) and what is wrong, with line and column when known.
 */
export async function readMetricsFile(absPath: string, displayPath: string): Promise<Record<string, number>> {
  let text: string;
  try {
    text = await readFile(absPath, 'utf8');
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : 'cannot be read';
    throw new Error(`Metrics file ${displayPath} ${why}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = parseMetricsText(text, /\.(json|ya?ml)$/i.exec(absPath)?.[1]?.toLowerCase() ?? null);
  if ('problem' in parsed) throw new Error(`Metrics file ${displayPath} ${parsed.problem}`);
  const { value } = parsed;
  if (typeof value !== 'object' || value === null) {
    throw new Error(
      `Metrics file ${displayPath} must hold an object of metric names, found ${describe(value)}`,
    );
  }
  const metrics: Record<string, number> = {};
  flatten(value, '', metrics);
  return metrics;
}

type Parsed = { value: unknown } | { problem: string };

function parseMetricsText(text: string, extension: string | null): Parsed {
  if (extension === 'json') return parseJson(text);
  if (extension !== null) return parseYaml(text);
  const json = parseJson(text);
  if ('value' in json) return json;
  const yaml = parseYaml(text);
  return 'value' in yaml
    ? yaml
    : { problem: `is neither JSON nor YAML: ${yaml.problem.replace(/^is not valid YAML: /, '')}` };
}

function parseJson(text: string): Parsed {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    const { message, where } = jsonSyntaxError(text, error);
    return { problem: `is not valid JSON: ${message}${where === null ? '' : ` (${where})`}` };
  }
}

function parseYaml(text: string): Parsed {
  const document = parseDocument(text);
  const [error] = document.errors;
  // The parser's message ends in a code excerpt after the first line; the first line says it.
  if (error !== undefined)
    return { problem: `is not valid YAML: ${error.message.split('\n')[0]!.replace(/:$/, '')}` };
  return { value: document.toJS() };
}

function flatten(value: object, prefix: string, into: Record<string, number>): void {
  for (const [key, item] of Object.entries(value)) {
    const name = prefix + key;
    if (typeof item === 'number' && Number.isFinite(item)) into[name] = item;
    else if (typeof item === 'object' && item !== null) flatten(item, `${name}.`, into);
  }
}

function describe(value: unknown): string {
  return value === null || value === undefined ? 'nothing (it is empty or null)' : `a ${typeof value}`;
}

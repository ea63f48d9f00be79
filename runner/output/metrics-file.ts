import { readFile } from 'node:fs/promises';
import JSON5 from 'json5';
import { parseDocument } from 'yaml';
import { jsonSyntaxError } from '../../core/text/json-syntax-error.js';

/** A metrics file's values, and what of it was left out that its author likely meant to count. */
export interface MetricsFile {
  metrics: Record<string, number>;
  /** `Metrics file m.json: loss is NaN, not a finite number: left out`, one a value. */
  warnings: string[];
}

/**
 * Reads a stage's metrics file into flat metric values (DESIGN §7): JSON for `.json`,
 * YAML for `.yml`/`.yaml`, otherwise JSON and then YAML. Nested objects flatten to
 * dotted names (`eval.acc`) and arrays to indexes (`scores.0`); only finite numbers
 * count — booleans, strings, nulls, NaN and infinities are left out. JSON may hold the
 * `NaN`, `Infinity` and `-Infinity` Python's `json.dump` writes for a diverged loss. A value
 * left out is warned about when it is NaN or infinite, a number in quotes (`"0.93"`), or
 * any value of a metric the pipeline declares (`declared`). A file that is missing,
 * malformed or not an object throws an Error naming `displayPath` (the path a user wrote
 * in `fluksio.yml`) and what is wrong, with line and column when known.
 */
export async function readMetricsFile(
  absPath: string,
  displayPath: string,
  declared: ReadonlySet<string> = new Set(),
): Promise<MetricsFile> {
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
  const leftOut: { name: string; value: unknown }[] = [];
  flatten(value, '', metrics, leftOut);
  const warnings = leftOut.flatMap(({ name, value: item }) => {
    const why = leftOutWhy(item, declared.has(name));
    return why === null ? [] : [`Metrics file ${displayPath}: ${name} ${why}`];
  });
  return { metrics, warnings };
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
    const withNonFinite = parsePythonJson(text);
    if (withNonFinite !== undefined) return { value: withNonFinite };
    const { message, where } = jsonSyntaxError(text, error);
    return { problem: `is not valid JSON: ${message}${where === null ? '' : ` (${where})`}` };
  }
}

/**
 * JSON as Python's `json.dump` writes it by default, with bare `NaN`, `Infinity` and
 * `-Infinity` for a diverged loss: JSON5 reads those as the numbers they are. Undefined
 * when it is not that either (the JSON error is the one said).
 */
function parsePythonJson(text: string): unknown {
  try {
    return JSON5.parse(text);
  } catch {
    return undefined;
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

function flatten(
  value: object,
  prefix: string,
  into: Record<string, number>,
  leftOut: { name: string; value: unknown }[],
): void {
  for (const [key, item] of Object.entries(value)) {
    const name = prefix + key;
    if (typeof item === 'number' && Number.isFinite(item)) into[name] = item;
    else if (typeof item === 'object' && item !== null) flatten(item, `${name}.`, into, leftOut);
    else leftOut.push({ name, value: item });
  }
}

/** Why a value left out deserves a warning, or null when it is plainly not a metric (a note). */
function leftOutWhy(value: unknown, declared: boolean): string | null {
  if (typeof value === 'number') return `is ${String(value)}, not a finite number: left out`;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)))
    return `is the string ${JSON.stringify(value)}, not a number: left out (write the number without quotes)`;
  if (!declared) return null;
  const shown = typeof value === 'string' ? `the string ${JSON.stringify(value)}` : String(value);
  return `is ${shown}, not a number: left out, so the metric has no value in this run`;
}

function describe(value: unknown): string {
  return value === null || value === undefined ? 'nothing (it is empty or null)' : `a ${typeof value}`;
}

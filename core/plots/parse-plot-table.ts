import { CsvError, parse as parseCsv } from 'csv-parse/sync';
import { parseDocument } from 'yaml';
import { jsonSyntaxError } from '../text/json-syntax-error.js';
import { z } from 'zod';

/** The data formats DVC reads a plot file in, by the file's extension. */
export type PlotFormat = 'csv' | 'tsv' | 'json' | 'yaml';

/** A cell as read: a finite number, text, or null for a gap (empty, null, NaN, ±Infinity). */
export type PlotCell = number | string | null;

/** A plot file's rows, each with where it is in the file (`line 3`, `record 2`). */
export interface PlotTable {
  /** The columns in the order the file gives them (the header, or the first record's keys). */
  columns: string[];
  rows: { at: string; cells: Map<string, PlotCell> }[];
}

/** A plot file that cannot be read as records; the message says where (`line 4: …`). */
export class PlotTableError extends Error {
  override readonly name = 'PlotTableError';
}

/** The format of a plot file by its extension, or null for one that holds no data series (an image). */
export function plotFormatOf(path: string): PlotFormat | null {
  const extension = /\.([^./]+)$/.exec(path)?.[1]?.toLowerCase();
  if (extension === 'csv' || extension === 'tsv' || extension === 'json') return extension;
  return extension === 'yaml' || extension === 'yml' ? 'yaml' : null;
}

export interface ParsePlotTableOptions {
  /** CSV and TSV: false when there is no header row (columns are then named 0, 1, …, as DVC names them). */
  header?: boolean;
  /**
   * JSON and YAML holding an object: the list of records taken is the first whose first
   * record has all these fields (DVC's rule), so `{"roc": [...]}` finds `roc`.
   */
  fields?: readonly string[];
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
const NON_FINITE = /^[+-]?(?:nan|inf|infinity)$/i;

/** A record of a JSON or YAML plot file: flat, its values numbers, text, booleans or null. */
const PlotRecord = z.record(
  z.string(),
  z.union([z.number(), z.string(), z.boolean(), z.null()], {
    error: 'expected a number, text, true/false or null (not a list or an object)',
  }),
);
const PlotRecords = z.array(PlotRecord);
/** What csv-parse returns with `info: true`: each record with where it ends in the file. */
const CsvRecords = z.array(
  z.looseObject({ info: z.looseObject({ lines: z.number() }), record: z.array(z.string()) }),
);

/**
 * Reads a plot file's text as DVC reads plot data: CSV and TSV (through csv-parse, a
 * header row unless `header: false`), or JSON and YAML holding a list of records or an
 * object with one (`{"roc": [{"fpr": 0, "tpr": 0}, …]}`). JSON may hold the `NaN` and
 * `Infinity` Python writes. Numbers are read as numbers (in CSV, cells that spell one);
 * empty cells, nulls and non-finite numbers are gaps. Throws a PlotTableError naming the
 * line (CSV, TSV, a syntax error) or record (JSON, YAML) that is wrong.
 */
export function parsePlotTable(
  text: string,
  format: PlotFormat,
  options: ParsePlotTableOptions = {},
): PlotTable {
  if (format === 'csv' || format === 'tsv')
    return parseDelimited(text, format === 'csv' ? ',' : '\t', options);
  const value = format === 'json' ? parseJson(text.replace(/^\uFEFF/, '')) : parseYaml(text);
  const records = findRecords(value, options.fields ?? []);
  const checked = PlotRecords.safeParse(records);
  if (!checked.success) {
    const [issue] = checked.error.issues;
    const [index, field] = issue?.path ?? [];
    const where = typeof index === 'number' ? `record ${index + 1}` : 'the list';
    const column = typeof field === 'string' ? `, field "${field}"` : '';
    throw new PlotTableError(
      `${where}${column}: ${issue?.message.replace(/^Invalid input: /, '') ?? 'invalid'}`,
    );
  }
  const columns: string[] = [];
  const seen = new Set<string>();
  const rows = checked.data.map((record, index) => {
    const cells = new Map<string, PlotCell>();
    for (const [key, raw] of Object.entries(record)) {
      if (!seen.has(key)) columns.push(key);
      seen.add(key);
      cells.set(
        key,
        typeof raw === 'number'
          ? Number.isFinite(raw)
            ? raw
            : null
          : typeof raw === 'boolean'
            ? String(raw)
            : raw,
      );
    }
    return { at: `record ${index + 1}`, cells };
  });
  return { columns, rows };
}

function parseDelimited(text: string, delimiter: string, options: ParsePlotTableOptions): PlotTable {
  let records: z.infer<typeof CsvRecords>;
  try {
    // csv-parse's types do not say what `info: true` returns: checked rather than cast.
    records = CsvRecords.parse(
      parseCsv(text, { delimiter, bom: true, info: true, relax_quotes: true, skip_empty_lines: true }),
    );
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    const line = (error as CsvError & { lines?: number }).lines;
    const message = error.message.replace(/ (?:on|at) line \d+/, '');
    throw new PlotTableError(line === undefined ? message : `line ${line}: ${message}`);
  }
  const [first] = records;
  if (first === undefined) return { columns: [], rows: [] };
  const header = options.header !== false;
  const columns = header
    ? first.record.map((name) => name.trim())
    : first.record.map((_, index) => String(index));
  const seen = new Set<string>();
  columns.forEach((name, index) => {
    if (name === '') throw new PlotTableError(`line ${first.info.lines}: column ${index + 1} has no name`);
    if (seen.has(name)) throw new PlotTableError(`line ${first.info.lines}: column "${name}" appears twice`);
    seen.add(name);
  });
  const rows = (header ? records.slice(1) : records).map(({ info, record }) => {
    const cells = new Map(record.map((cell, index) => [columns[index]!, cellOf(cell)] as const));
    return { at: `line ${info.lines}`, cells };
  });
  return { columns, rows };
}

function cellOf(text: string): PlotCell {
  const trimmed = text.trim();
  if (trimmed === '' || NON_FINITE.test(trimmed)) return null;
  if (DECIMAL.test(trimmed)) {
    const value = Number(trimmed);
    return Number.isFinite(value) ? value : null;
  }
  return text;
}

/** JSON, with the bare NaN, Infinity and -Infinity of Python's json module read as gaps. */
function parseJson(text: string): unknown {
  // Strings are matched first, so a token inside one is left alone.
  const tokens = /"(?:[^"\\]|\\.)*"|-?\bInfinity\b|\bNaN\b/g;
  const plain = text.replace(tokens, (token) => (token.startsWith('"') ? token : 'null'));
  try {
    return JSON.parse(plain);
  } catch (error) {
    const { message, where } = jsonSyntaxError(plain, error);
    throw new PlotTableError(`${where === null ? '' : `${where}: `}is not valid JSON: ${message}`);
  }
}

function parseYaml(text: string): unknown {
  const document = parseDocument(text);
  const [error] = document.errors;
  if (error !== undefined) {
    const line = error.linePos?.[0].line;
    // The parser's message goes on with where and an excerpt; the first clause says what.
    const message = `is not valid YAML: ${error.message.split(' at line ')[0]!.split('\n')[0]!.replace(/:$/, '')}`;
    throw new PlotTableError(line === undefined ? message : `line ${line}: ${message}`);
  }
  return document.toJS();
}

/** The records of a parsed JSON or YAML plot file: the list itself, or DVC's first list of records in an object. */
function findRecords(value: unknown, fields: readonly string[]): unknown {
  if (Array.isArray(value)) return value;
  if (value === null || typeof value !== 'object') {
    throw new PlotTableError(`expected a list of records or an object holding one, found ${describe(value)}`);
  }
  const found = firstRecordList(value as Record<string, unknown>, fields);
  if (found === null) {
    const wanted =
      fields.length > 0 ? ` whose records have ${fields.map((field) => `"${field}"`).join(', ')}` : '';
    throw new PlotTableError(`holds no list of records${wanted}`);
  }
  return found;
}

function firstRecordList(object: Record<string, unknown>, fields: readonly string[]): unknown[] | null {
  for (const value of Object.values(object)) {
    if (Array.isArray(value)) {
      const [first] = value;
      const records = value.every(
        (item) => item !== null && typeof item === 'object' && !Array.isArray(item),
      );
      if (records && first !== undefined && fields.every((field) => Object.hasOwn(first as object, field)))
        return value;
    } else if (value !== null && typeof value === 'object') {
      const inner = firstRecordList(value as Record<string, unknown>, fields);
      if (inner !== null) return inner;
    }
  }
  return null;
}

function describe(value: unknown): string {
  return value === null || value === undefined ? 'nothing' : `a ${typeof value}`;
}

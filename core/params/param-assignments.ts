import type { Problem } from '../problem.js';

/** `key=value` as written, with a sweep's values split: `lr=0.1,0.01` → ['0.1', '0.01']. */
export interface ParamAssignment {
  key: string;
  values: string[];
}

export interface ParsedAssignments {
  assignments: ParamAssignment[];
  problems: Problem[];
}

/** A run of characters of one token, and whether it was inside quotes. */
interface Segment {
  text: string;
  quoted: boolean;
}

/** One blank-separated token of free text: as written (quotes included), and as read. */
export interface AssignmentToken {
  /** The token's characters as they stand in the text, e.g. `note="two words"`. */
  written: string;
  segments: Segment[];
}

/**
 * The parameter grammar of DESIGN §4 over free text (a PR comment, the action's
 * `params` input): `key=value` tokens separated by blanks; values may be quoted with
 * "…" or '…' (`note="two words"`); an unquoted comma makes a sweep; `\,` and quoted
 * commas are literal. Hand-written because the grammar is ours: a shell-words library
 * would lose which commas were quoted, and what a sweep is depends on exactly that.
 */
export function parseAssignmentText(text: string): ParsedAssignments {
  const { tokens, problems } = tokenizeAssignmentText(text);
  return assignmentsOf(tokens, problems);
}

/**
 * Splits free text into tokens on blanks outside quotes — the one tokenizer of the grammar,
 * which a `/fluksio run` comment also reads its `--flags` from. `\` escapes only inside
 * "…". An unterminated quote is a problem, and then there are no tokens.
 */
export function tokenizeAssignmentText(text: string): { tokens: AssignmentToken[]; problems: Problem[] } {
  const tokens: AssignmentToken[] = [];
  let token: AssignmentToken | null = null;
  let start = 0;
  let index = 0;
  const open = (): AssignmentToken => {
    if (token === null) {
      token = { written: '', segments: [] };
      start = index;
    }
    return token;
  };
  const close = () => {
    if (token) tokens.push({ ...token, written: text.slice(start, index) });
    token = null;
  };
  const append = (char: string, quoted: boolean) => {
    const { segments } = open();
    const last = segments.at(-1);
    if (last && last.quoted === quoted) last.text += char;
    else segments.push({ text: char, quoted });
  };
  while (index < text.length) {
    const char = text[index] as string;
    if (/\s/.test(char)) {
      close();
      index += 1;
    } else if (char === '"' || char === "'") {
      const end = findClosingQuote(text, index);
      if (end < 0) {
        const message = `Unterminated ${char} quote in ${JSON.stringify(text.slice(index))}`;
        return { tokens: [], problems: [{ path: '', message }] };
      }
      const body = text.slice(index + 1, end);
      // An empty quoted value (`note=""`) is still a value.
      open().segments.push({ text: char === '"' ? body.replace(/\\(["\\])/g, '$1') : body, quoted: true });
      index = end + 1;
    } else if (char === '\\' && text[index + 1] === ',') {
      append(',', true);
      index += 2;
    } else {
      append(char, false);
      index += 1;
    }
  }
  close();
  return { tokens, problems: [] };
}

/** The assignments the tokens make, each problem named (a key given twice, a bad token). */
export function assignmentsOf(
  tokens: readonly AssignmentToken[],
  problems: Problem[] = [],
): ParsedAssignments {
  return finish(
    tokens.map((token) => assignmentOf(token.segments)),
    problems,
  );
}

/**
 * The same grammar over arguments a shell has already split (`fluksio run lr=0.1,0.01
 * "note=two words"`): quotes are gone, so only `\,` keeps a comma literal.
 */
export function parseAssignmentArgs(args: readonly string[]): ParsedAssignments {
  const segmentsOf = (arg: string): Segment[] =>
    arg
      .split(/(\\,)/)
      .map((part) => (part === '\\,' ? { text: ',', quoted: true } : { text: part, quoted: false }));
  return finish(
    args.map((arg) => assignmentOf(segmentsOf(arg))),
    [],
  );
}

function finish(
  results: ({ assignment: ParamAssignment } | { problem: Problem })[],
  problems: Problem[],
): ParsedAssignments {
  const assignments: ParamAssignment[] = [];
  const all = [...problems];
  const seen = new Set<string>();
  for (const result of results) {
    if ('problem' in result) {
      all.push(result.problem);
      continue;
    }
    if (seen.has(result.assignment.key)) {
      all.push({
        path: '',
        message: `Parameter '${result.assignment.key}' is given twice; for a sweep write ${result.assignment.key}=a,b`,
      });
      continue;
    }
    seen.add(result.assignment.key);
    assignments.push(result.assignment);
  }
  return { assignments, problems: all };
}

function assignmentOf(segments: Segment[]): { assignment: ParamAssignment } | { problem: Problem } {
  const raw = segments.map((segment) => segment.text).join('');
  const first = segments[0];
  const equals = first && !first.quoted ? first.text.indexOf('=') : -1;
  if (!first || equals < 0) {
    return { problem: { path: '', message: `"${raw}" is not key=value (e.g. lr=0.1)` } };
  }
  const key = first.text.slice(0, equals);
  // Besides identifiers, the names DVC gives params: `featurize.max_features`, `layers[0]`,
  // and `file.yaml:key` for a params file other than params.yaml.
  if (!/^(?:[\w./-]+:)?[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*$/.test(key)) {
    return { problem: { path: '', message: `"${raw}": "${key}" is not a parameter name (e.g. lr=0.1)` } };
  }
  const valueSegments = [{ text: first.text.slice(equals + 1), quoted: false }, ...segments.slice(1)];
  const values: string[] = [''];
  for (const segment of valueSegments) {
    if (segment.quoted) {
      values[values.length - 1] += segment.text;
      continue;
    }
    const parts = segment.text.split(',');
    values[values.length - 1] += parts[0] ?? '';
    values.push(...parts.slice(1));
  }
  if (values.length > 1 && values.some((value) => value === '')) {
    return { problem: { path: '', message: `Parameter '${key}': a sweep has an empty value in "${raw}"` } };
  }
  return { assignment: { key, values } };
}

function findClosingQuote(text: string, open: number): number {
  const quote = text[open];
  for (let index = open + 1; index < text.length; index += 1) {
    if (quote === '"' && text[index] === '\\') index += 1;
    else if (text[index] === quote) return index;
  }
  return -1;
}

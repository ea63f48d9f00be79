import { shellQuote } from '../pipeline/interpolate-command.js';

/** What `${…}` can see: the merged `vars` (params.yaml first), and which of it are params. */
export interface TemplateContext {
  data: Readonly<Record<string, unknown>>;
  /**
   * params.yaml as loaded: a reference into it inside `cmd` stays a `${name}` placeholder
   * that the run fills with its typed value, so `featurize.max_features=400` reaches the
   * command (DVC would resolve it once, from the file).
   */
  params: Readonly<Record<string, unknown>>;
}

/** A templating mistake, in the words DVC's own errors use; the caller adds file and field. */
export class DvcTemplateError extends Error {}

/** What resolving a field gave: its value, and the params a `cmd` now interpolates. */
export interface Resolved {
  value: unknown;
  params: string[];
}

const EXPRESSION = /\\?\$\{([^}]*)\}/g;

/**
 * Resolves DVC's templating (https://dvc.org/doc/user-guide/project-structure/dvcyaml-files#templating)
 * in a value, recursively: `${a.b[0]}` and `${a.b.0}` look up the context; a string that is
 * one lone expression keeps the value's type (a list stays a list); `\${` is a literal
 * `${`. With `cmd: true`, a dictionary expands to `--key value` (nested keys dotted, true
 * booleans as `--key`, false ones left out, lists as `--key a b`), strings are quoted for the
 * shell, and params become `${name}` placeholders that fluksio quotes at run time.
 */
export function resolveTemplate(value: unknown, context: TemplateContext, cmd = false): Resolved {
  const params: string[] = [];
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return resolveString(node, context, cmd, params);
    if (Array.isArray(node)) return node.map(walk);
    if (node !== null && typeof node === 'object') {
      return Object.fromEntries(Object.entries(node).map(([key, inner]) => [key, walk(inner)]));
    }
    return node;
  };
  return { value: walk(value), params: [...new Set(params)] };
}

function resolveString(text: string, context: TemplateContext, cmd: boolean, params: string[]): unknown {
  const matches = [...text.matchAll(EXPRESSION)];
  const lone = matches.length === 1 && matches[0]?.[0] === text && !text.startsWith('\\');
  if (lone && !cmd) return lookup(context.data, parseReference(matches[0]?.[1] ?? ''));
  let result = '';
  let at = 0;
  for (const match of matches) {
    result += text.slice(at, match.index);
    at = match.index + match[0].length;
    if (match[0].startsWith('\\')) {
      result += cmd ? literalShellExpansion(match[1] ?? '', text[at]) : match[0].slice(1);
      continue;
    }
    const path = parseReference(match[1] ?? '');
    const value = lookup(context.data, path);
    result += cmd ? inCommand(path, value, context, params) : inText(match[1] ?? '', value);
  }
  return result + text.slice(at);
}

/** `a.b[0]` or `a.b.0` → ['a', 'b', 0]. */
export function parseReference(expression: string): (string | number)[] {
  const trimmed = expression.trim();
  if (!/^[A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*$/.test(trimmed)) {
    throw new DvcTemplateError(`\${${expression}} is not a reference such as \${a.b[0]}`);
  }
  return trimmed
    .split(/\.|\[(\d+)\]/)
    .filter((part) => part !== undefined && part !== '')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

function lookup(data: unknown, path: readonly (string | number)[]): unknown {
  let node: unknown = data;
  for (const [index, part] of path.entries()) {
    const container =
      Array.isArray(node) && typeof part === 'number'
        ? node
        : node !== null && typeof node === 'object' && !Array.isArray(node)
          ? (node as Record<string, unknown>)
          : null;
    const key = String(part);
    if (container === null || !Object.hasOwn(container, key)) {
      throw new DvcTemplateError(
        `\${${formatReference(path)}}: "${formatReference(path.slice(0, index + 1))}" is not defined`,
      );
    }
    node = (container as Record<string, unknown>)[key];
  }
  return node;
}

/** ['a', 'b', 0] → `a.b[0]`: how fluksio names a param of params.yaml. */
export function formatReference(path: readonly (string | number)[]): string {
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join('');
}

/** DVC's `to_str`: booleans lower case, everything else as written. */
export function scalarText(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (value === null) return 'None';
  return String(value);
}

function inText(expression: string, value: unknown): string {
  if (value !== null && typeof value === 'object') {
    throw new DvcTemplateError(
      `\${${expression}} is a ${Array.isArray(value) ? 'list' : 'dictionary'}; only cmd can interpolate one inside other text`,
    );
  }
  return scalarText(value);
}

function inCommand(
  path: readonly (string | number)[],
  value: unknown,
  context: TemplateContext,
  params: string[],
): string {
  const param = paramOf(path, context.params);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return flagsOf(value as Record<string, unknown>, param === null ? null : path, context, params);
  }
  if (param !== null) params.push(param.name);
  if (param?.exact && !Array.isArray(value)) return `\${${param.name}}`;
  if (Array.isArray(value)) return value.map((item) => shellQuote(scalarText(item))).join(' ');
  return shellQuote(scalarText(value));
}

function flagsOf(
  dict: Record<string, unknown>,
  paramPath: readonly (string | number)[] | null,
  context: TemplateContext,
  params: string[],
): string {
  const words: string[] = [];
  const visit = (node: Record<string, unknown>, prefix: string[]) => {
    for (const [key, value] of Object.entries(node)) {
      const flag = [...prefix, key].join('.');
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        visit(value as Record<string, unknown>, [...prefix, key]);
      } else if (typeof value === 'boolean') {
        if (paramPath) params.push(formatReference([...paramPath, ...prefix, key]));
        if (value) words.push(`--${flag}`);
      } else if (Array.isArray(value)) {
        if (paramPath) params.push(formatReference([...paramPath, ...prefix, key]));
        words.push(`--${flag}`, ...value.map((item) => shellQuote(scalarText(item))));
      } else if (paramPath) {
        const name = formatReference([...paramPath, ...prefix, key]);
        params.push(name);
        words.push(`--${flag}`, `\${${name}}`);
      } else {
        words.push(`--${flag}`, shellQuote(scalarText(value)));
      }
    }
  };
  visit(dict, []);
  return words.join(' ');
}

/**
 * The param of params.yaml a reference reads: the leaf it names (`exact`), or the list
 * it reaches into (a list is one param, its items are not), or null outside params.yaml.
 */
function paramOf(
  path: readonly (string | number)[],
  params: Readonly<Record<string, unknown>>,
): { name: string; exact: boolean } | null {
  let node: unknown = params;
  for (const [index, part] of path.entries()) {
    if (
      node === null ||
      typeof node !== 'object' ||
      Array.isArray(node) ||
      !Object.hasOwn(node, String(part))
    ) {
      return index === 0 ? null : { name: formatReference(path.slice(0, index)), exact: false };
    }
    node = (node as Record<string, unknown>)[String(part)];
  }
  return { name: formatReference(path), exact: true };
}

/**
 * `\${NAME}` in a command is the shell's own expansion. fluksio reads every `${…}` of a
 * command as a param, so the same expansion is written `$NAME` (with `""` before a
 * following name character, which keeps the word whole); other forms cannot be carried.
 */
function literalShellExpansion(inner: string, next: string | undefined): string {
  if (!/^[A-Za-z_]\w*$/.test(inner)) {
    throw new DvcTemplateError(
      `\\\${${inner}} cannot be carried into a fluksio command; write it as $NAME or in a script`,
    );
  }
  return next !== undefined && /\w/.test(next) ? `$${inner}""` : `$${inner}`;
}

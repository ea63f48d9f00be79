/** A GitHub-Actions-style command a stage printed: `::name key=value,…::value`. */
export interface WorkflowCommand {
  name: string;
  properties: Record<string, string>;
  value: string;
}

const MESSAGE_ESCAPES: Record<string, string> = { '%25': '%', '%0D': '\r', '%0A': '\n' };
const PROPERTY_ESCAPES: Record<string, string> = { ...MESSAGE_ESCAPES, '%3A': ':', '%2C': ',' };

/**
 * Parses one output line as a workflow command (`::name key=value,key2=value2::message`
 * or `::name::message`), or returns null when the line is not one. It follows the
 * GitHub Actions runner: the line must start with `::` (leading whitespace makes it
 * ordinary output), properties are split on `,` and each on its first `=`, pairs
 * without `=` are dropped, and values are unescaped as `@actions/core` escapes them —
 * `%25`, `%0D`, `%0A` everywhere and also `%3A`, `%2C` in property values. Unlike the
 * runner, whitespace around property keys is ignored (`file=a.py, line=3`).
 */
export function parseWorkflowCommand(line: string): WorkflowCommand | null {
  if (!line.startsWith('::')) return null;
  const end = line.indexOf('::', 2);
  if (end === -1) return null;
  const header = line.slice(2, end);
  const space = header.indexOf(' ');
  const name = space === -1 ? header : header.slice(0, space);
  if (name === '') return null;
  const entries: [string, string][] = [];
  if (space !== -1) {
    for (const pair of header.slice(space + 1).split(',')) {
      const equals = pair.indexOf('=');
      const key = pair.slice(0, equals).trim();
      if (equals === -1 || key === '') continue;
      entries.push([key, unescape(pair.slice(equals + 1), PROPERTY_ESCAPES)]);
    }
  }
  // fromEntries defines own properties, so a key like `__proto__` stays plain data.
  const properties = Object.fromEntries(entries);
  return { name, properties, value: unescape(line.slice(end + 2), MESSAGE_ESCAPES) };
}

/**
 * One pass over the text, so an escaped `%` is never read again as the start of
 * another escape (`%250A` is the text `%0A`, not a newline).
 */
function unescape(text: string, escapes: Record<string, string>): string {
  return text.replace(/%(?:25|0D|0A|3A|2C)/g, (escape) => escapes[escape] ?? escape);
}

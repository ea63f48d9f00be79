import type { ParamValue } from '../../schemas/key-inputs.js';
import { placeholderContexts, type QuotingContext } from './placeholder-contexts.js';

/** The names a command interpolates with `${name}`, in order of appearance. */
export function interpolatedNames(cmd: string): string[] {
  return placeholderContexts(cmd).map((placeholder) => placeholder.name);
}

/**
 * Replaces each `${name}` with the param's value, quoted for where it stands (DESIGN §3),
 * so that a value such as `$(touch /tmp/pwned)` or `'; rm -rf ~ #` reaches the stage as
 * literal text and nothing in it is executed: a plain word becomes one single-quoted
 * word; inside '…' or "…" the quote is closed, the single-quoted value put in, and the
 * quote opened again (`"note=${note}"` → `"note="'a b'""`). The pipeline validation has
 * already checked that every name is a param the stage lists and that no placeholder
 * stands where no quoting is safe; such a command is refused here too.
 */
export function interpolateCommand(cmd: string, values: Readonly<Record<string, ParamValue>>): string {
  let result = '';
  let at = 0;
  for (const placeholder of placeholderContexts(cmd)) {
    const { name, context } = placeholder;
    if (typeof context !== 'string') {
      throw new Error(
        `The command has \${${name}} inside ${context.unsafe}, where its value cannot be quoted safely`,
      );
    }
    const value = values[name];
    if (value === undefined) throw new Error(`The command interpolates \${${name}}, which has no value`);
    result += cmd.slice(at, placeholder.start) + quoteIn(context, String(value));
    at = placeholder.end;
  }
  return result + cmd.slice(at);
}

/**
 * POSIX single quoting: inside '…' the shell interprets nothing, and a quote itself is
 * written as '\''. Plain words (digits, letters, `.-_/:,+@%`) stay unquoted for readable
 * commands; `=` is not among them, so a value can never turn a command word into a
 * variable assignment.
 */
export function shellQuote(value: string): string {
  if (isPlainWord(value)) return value;
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

function isPlainWord(value: string): boolean {
  return /^[A-Za-z0-9._\-/:,+@%]+$/.test(value);
}

function quoteIn(context: QuotingContext, value: string): string {
  if (context === 'plain' || isPlainWord(value)) return shellQuote(value);
  const quote = context === 'single quotes' ? "'" : '"';
  return `${quote}${shellQuote(value)}${quote}`;
}

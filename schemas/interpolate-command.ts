import type { ParamValue } from './key-inputs.js';

const PLACEHOLDER = /\$\{([^}]*)\}/g;

/** The names a command interpolates with `${name}`, in order of appearance. */
export function interpolatedNames(cmd: string): string[] {
  return [...cmd.matchAll(PLACEHOLDER)].map((match) => match[1] ?? '');
}

/**
 * Replaces each `${name}` with the param's value, always shell-quoted (DESIGN §3), so
 * a value such as `$(touch /tmp/pwned)` or `'; rm -rf ~ #` reaches the stage as one
 * literal argument and nothing in it is executed. The pipeline validation has already
 * checked that every name is a param the stage lists.
 */
export function interpolateCommand(cmd: string, values: Readonly<Record<string, ParamValue>>): string {
  return cmd.replace(PLACEHOLDER, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`The command interpolates \${${name}}, which has no value`);
    return shellQuote(String(value));
  });
}

/**
 * POSIX single quoting: inside '…' the shell interprets nothing, and a quote itself is
 * written as '\''. Plain words (digits, letters, `.-_/=:,+@%`) stay unquoted for
 * readable commands.
 */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9._\-/=:,+@%]+$/.test(value)) return value;
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

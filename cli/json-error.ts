import type { UsageProblem } from '../present/terminal/usage-error.js';

/**
 * What a command run with `--json` prints on stdout when it fails, instead of nothing: a
 * script piping it into jq reads why, and the exit code it also gets. The sentence a person
 * reads is on stderr all the same.
 */
export interface JsonError {
  error: {
    /** The sentence stderr has: what was wrong, the bad value, what is expected. */
    message: string;
    /** The process's exit code: 2 the input was wrong, 1 anything else. */
    exitCode: number;
    /** Each problem of an invalid input apart (an invalid fluksio.yml, bad parameters); absent when there is one thing to say. */
    problems?: readonly UsageProblem[];
  };
}

/** Whether the command line asks for JSON: `--json` among the words before any `--`. */
export function asksForJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** The line `--json` prints on stdout for a failure. */
export function jsonErrorLine(
  message: string,
  exitCode: number,
  problems: readonly UsageProblem[] = [],
): string {
  const error: JsonError = {
    error: { message, exitCode, ...(problems.length > 0 ? { problems } : {}) },
  };
  return `${JSON.stringify(error, null, 2)}\n`;
}

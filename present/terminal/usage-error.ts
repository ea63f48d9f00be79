import { formatProblems, type Problem } from '../../core/problem.js';

/** A problem with an input, and the file it is in when the input was a file. */
export interface UsageProblem extends Problem {
  file?: string;
}

/**
 * The input was wrong (DESIGN §9: exit code 2). The message is what the user reads:
 * what was wrong, where, and what is expected; nothing was created.
 */
export class UsageError extends Error {
  /** Each problem the message names, apart, for a program reading `--json`; empty when it names one thing. */
  readonly problems: readonly UsageProblem[];

  constructor(message: string, options?: ErrorOptions & { problems?: readonly UsageProblem[] }) {
    super(message, options);
    this.name = 'UsageError';
    this.problems = options?.problems ?? [];
  }
}

/** The usage error naming every problem of an input, one per line (`file:line: path: message`). */
export function problemsError(problems: readonly Problem[], file?: string): UsageError {
  return new UsageError(formatProblems(problems, file), {
    problems: problems.map((problem) => (file === undefined ? problem : { ...problem, file })),
  });
}

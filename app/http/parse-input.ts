import type { z } from 'zod';
import { formatPath } from '../../core/problem.js';
import { storableJson } from '../../core/text/storable-text.js';
import { HttpError } from './http-error.js';

/** How many of a request's problems its 400 names. */
const MAX_PROBLEMS = 20;

/**
 * Validates one part of a request with its zod schema, once every string in it is
 * storable (NUL and lone surrogates as U+FFFD, storable-text.ts): a byte no PostgreSQL
 * text can hold arrives as data, like a stage's log line, instead of failing the write
 * with a 500. On failure answers 400 with every problem at once, `events[0].seq: expected
 * a number ≥ 0; …`, and `field` set to the first one's path (`where`, e.g. `body`, when
 * the part as a whole is wrong).
 */
export function parseInput<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  where: string,
): z.output<Schema> {
  const parsed = schema.safeParse(storableJson(value));
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => describeIssue(issue, where));
  const [first] = problems;
  // A body of thousands of bad items says the first few; the sentence stays readable.
  const told = problems.slice(0, MAX_PROBLEMS).map((problem) => `${problem.field}: ${problem.message}`);
  if (problems.length > MAX_PROBLEMS) told.push(`and ${problems.length - MAX_PROBLEMS} more problems`);
  throw new HttpError(400, told.join('; '), first?.field);
}

function describeIssue(issue: z.core.$ZodIssue, where: string): { field: string; message: string } {
  const path = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const [key = ''] = issue.keys;
    return {
      field: path ? `${path}.${key}` : key,
      message: `is not a field of this request (unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys
        .map((name) => `"${name}"`)
        .join(', ')})`,
    };
  }
  const field = path || where;
  if (issue.code === 'invalid_union' && 'discriminator' in issue && issue.discriminator) {
    return { field, message: 'is not a known kind' };
  }
  if (issue.code === 'invalid_type' && / received undefined$/.test(issue.message)) {
    return { field, message: `is required (expected ${issue.expected})` };
  }
  return { field, message: issue.message.replace(/^Invalid input: /, '') };
}

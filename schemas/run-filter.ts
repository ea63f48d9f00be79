import { z } from 'zod';

/** How a filter compares: equality for any value, order for numbers. */
export const FILTER_OPERATORS = ['=', '!=', '<', '<=', '>', '>='] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** `NAME OP VALUE`: a name holds no blank and none of the operators' characters. */
const EXPRESSION = /^\s*([^\s<>=!]+)\s*(<=|>=|!=|==|=|<|>)\s*(.*?)\s*$/;

const EXPECTED =
  'expected NAME OP VALUE with OP one of =, !=, <, <=, >, >= (e.g. lr=0.1, accuracy>0.9, status=failed)';

/**
 * One `fluksio runs --filter` expression, e.g. `lr=0.1`, `accuracy>0.9`, `status=failed`.
 * NAME is a param, a metric, `status`, `commit` or `id`; `<`, `<=`, `>` and `>=` take a
 * number; `==` is read as `=`. Which runs a name reaches is decided where the runs are
 * known (core/experiments/select-runs).
 */
export const RunFilter = z.string().transform((text, ctx) => {
  const match = EXPRESSION.exec(text);
  const [, name = '', written = '', value = ''] = match ?? [];
  if (!match || value === '') {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a filter: ${EXPECTED}` });
    return z.NEVER;
  }
  const op: FilterOperator = written === '==' ? '=' : (written as FilterOperator);
  const number = Number(value);
  if (op !== '=' && op !== '!=' && !Number.isFinite(number)) {
    ctx.addIssue({
      code: 'custom',
      message: `"${text}": ${op} compares numbers, and "${value}" is not one (e.g. ${name}${op}0.9)`,
    });
    return z.NEVER;
  }
  return { text: text.trim(), name, op, value };
});
export type RunFilter = z.infer<typeof RunFilter>;

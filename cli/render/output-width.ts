/**
 * How wide a command's tables may be: the terminal's columns on a terminal, else
 * `COLUMNS` when set, else unlimited (a pipe or a file keeps every column whole).
 */
export function outputWidth(
  stream: { isTTY?: boolean; columns?: number },
  env: Readonly<Record<string, string | undefined>>,
): number {
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns;
  const fromEnv = Number(env.COLUMNS);
  return Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : Infinity;
}

/**
 * A stage's logged lines as its log's bytes: each line ends in a newline but those ended
 * by a lone `\r` (line-splitter.ts), so a progress bar's states stay one terminal line, as
 * printed. The stored log and the live one a local run writes are both made by this, so a
 * byte offset into one is the same place in the other.
 */
export function logText(lines: readonly string[]): string {
  let text = '';
  for (const line of lines) text += line.endsWith('\r') ? line : `${line}\n`;
  return text;
}

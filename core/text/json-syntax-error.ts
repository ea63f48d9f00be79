import { parseDocument } from 'yaml';
import { messageOf } from './message-of.js';

/**
 * What `JSON.parse(text)` said when it threw `error`, and where: the message without the
 * `(line 3 column 1)` that newer Node releases append, and `line N, column M` from the
 * offset it names — or, from engines that name none, from the YAML parser (JSON is YAML).
 * `where` is null when neither says.
 */
export function jsonSyntaxError(text: string, error: unknown): { message: string; where: string | null } {
  const message = messageOf(error).replace(/ \(line \d+ column \d+\)$/, '');
  const position = /at position (\d+)/.exec(message);
  if (position) {
    const before = text.slice(0, Number(position[1])).split('\n');
    return { message, where: `line ${before.length}, column ${before.at(-1)!.length + 1}` };
  }
  const at = parseDocument(text).errors[0]?.linePos?.[0];
  return { message, where: at ? `line ${at.line}, column ${at.col}` : null };
}

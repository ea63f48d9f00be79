import { parseDocument } from 'yaml';
import { messageOf } from './message-of.js';

/**
 * What `JSON.parse(text)` said when it threw `error`, and where: the message without the
 * `(line 3 column 1)` that newer Node releases append, and `line N, column M` from the
 * offset it names — or, from engines that name none, from the YAML parser (JSON is YAML).
 * `where` is null when neither says.
 *
 * The excerpt of the text that V8 quotes (`Unexpected token 'h', "hf_3kP0wL"... is not
 * valid JSON`) is left out: the text may be a file a stage wrote, holding a secret that
 * the excerpt cuts where no mask can recognise it. Where the excerpt says, the offset is
 * read from it instead.
 */
export function jsonSyntaxError(text: string, error: unknown): { message: string; where: string | null } {
  const raw = messageOf(error).replace(/ \(line \d+ column \d+\)$/, '');
  const excerpt = /, (\.\.\.)?"(.*)"(\.\.\.)? is not valid JSON$/s.exec(raw);
  const message = excerpt ? raw.slice(0, excerpt.index) : raw;
  const position = /at position (\d+)/.exec(message)?.[1] ?? excerptOffset(text, excerpt);
  if (position !== null) {
    const before = text.slice(0, Number(position)).split('\n');
    return { message, where: `line ${before.length}, column ${before.at(-1)!.length + 1}` };
  }
  const at = parseDocument(text).errors[0]?.linePos?.[0];
  return { message, where: at ? `line ${at.line}, column ${at.col}` : null };
}

/** Characters V8 quotes on each side of the offending one (json-parser.cc, kMaxContextCharacters). */
const CONTEXT = 10;

/** The offset of the offending character, from V8's excerpt around it, or null when it does not say. */
function excerptOffset(text: string, excerpt: RegExpExecArray | null): number | null {
  if (excerpt === null) return null;
  const [, cutBefore, quoted = '', cutAfter] = excerpt;
  if (cutBefore === undefined && cutAfter === undefined) return null;
  const start = cutBefore === undefined ? 0 : text.indexOf(quoted);
  if (start === -1) return null;
  const offset = cutBefore === undefined ? quoted.length - CONTEXT : start + CONTEXT;
  return offset >= 0 && offset < text.length ? offset : null;
}

/** git's own escapes for the control characters it names; other bytes become octal. */
const NAMED: Readonly<Record<number, string>> = {
  0x07: '\\a',
  0x08: '\\b',
  0x09: '\\t',
  0x0a: '\\n',
  0x0b: '\\v',
  0x0c: '\\f',
  0x0d: '\\r',
  0x22: '\\"',
  0x5c: '\\\\',
};

/**
 * A path's bytes as `git status` shows them with its default `core.quotePath`: in double
 * quotes, `"` and `\` escaped, control characters and every byte above 0x7f in octal
 * (`"conf\377.txt"`), so a name that is not UTF-8 can be named in a sentence and found
 * again in git's output.
 */
export function gitQuotedPath(bytes: Uint8Array): string {
  let quoted = '"';
  for (const byte of bytes) {
    const named = NAMED[byte];
    if (named !== undefined) quoted += named;
    else if (byte < 0x20 || byte > 0x7e) quoted += `\\${byte.toString(8).padStart(3, '0')}`;
    else quoted += String.fromCharCode(byte);
  }
  return `${quoted}"`;
}

/** Characters that end a word outside quotes. */
const WORD_END = /[\s;&|<>()]/;

/**
 * Whether a shell command line holds a bracket expression the shell expands as a glob
 * (`data/part[0-9].csv`): a `[` outside quotes and not escaped, closed by a `]` in the
 * same word. shell-quote reports `*` and `?` as globs but reads `[…]` as plain text, and
 * `/bin/sh` replaces such a word with the names it finds on disk: a listing no audit hook
 * sees. A quoted or escaped bracket (`'[1,2]'`, `\[1\]`) is text, and so is one in a
 * comment.
 */
export function hasUnquotedBracketGlob(cmd: string): boolean {
  let quote: "'" | '"' | null = null;
  let wordStart = true;
  let open = false;
  for (let at = 0; at < cmd.length; at += 1) {
    const char = cmd[at] as string;
    if (quote === "'") {
      if (char === "'") quote = null;
      continue;
    }
    if (quote === '"') {
      if (char === '\\') at += 1;
      else if (char === '"') quote = null;
      continue;
    }
    if (WORD_END.test(char)) {
      wordStart = true;
      open = false;
      continue;
    }
    if (char === '#' && wordStart) {
      const newline = cmd.indexOf('\n', at);
      at = newline < 0 ? cmd.length : newline - 1;
      continue;
    }
    wordStart = false;
    if (char === '\\') at += 1;
    else if (char === "'" || char === '"') quote = char;
    else if (char === '[') open = true;
    else if (char === ']' && open) return true;
  }
  return false;
}

import path from 'node:path';
import { parse } from 'shell-quote';

/** A program a command line starts, and the folder the shell is in when it starts it. */
export interface CommandProgram {
  /** As written: `python3`, `./run.sh`. */
  word: string;
  /**
   * Where it starts: `.` (where the line starts) unless a literal `cd` before it says
   * otherwise, then that folder relative to `.` (`sub`, `..`), or absolute as written.
   */
  dir: string;
}

/** Operators after which the shell starts a new command. */
const COMMAND_SEPARATORS = new Set(['&&', '||', ';', ';;', '|', '|&', '&', '(', ')']);
/** Words that run the command after them (with their own options first): `env python3 x.py`. */
const WRAPPERS = new Set(['env', 'exec', 'command', 'nohup', 'time']);
/**
 * What `/bin/sh` runs itself, not from PATH (some also exist as files, like `/bin/echo`,
 * but the shell never starts those), and its keywords.
 */
const SHELL_OWN = new Set(
  (
    '. : [ alias bg break case cd continue do done echo elif else esac eval exit export false fg fi for ' +
    'getopts hash if in jobs kill local printf pwd read readonly return set shift source test then ' +
    'trap true type ulimit umask unalias unset until wait while { } !'
  ).split(' '),
);
/** Keywords after which the shell reads a command: `if python3 check.py; then node run.js; fi` starts both. */
const BEFORE_COMMAND = new Set(['if', 'then', 'else', 'elif', 'while', 'until', 'do', '!']);
/**
 * Commands after which the folder is no longer followed: compound commands (a `cd` in a
 * loop or a branch, whose words this reading takes as arguments), and what may run code
 * it cannot see (`eval`, `.`, a function). Programs after them start in `.`, as before
 * folders were followed.
 */
const OPAQUE = new Set(
  (
    '! . alias builtin case do done elif else esac eval fi for function if in popd pushd select source ' +
    'then until while'
  ).split(' '),
);

/** Where the shell is: a folder, not known, or nowhere (that path of the line ended: `exit`). */
type Place = string | typeof UNKNOWN | typeof NOWHERE;
const UNKNOWN: unique symbol = Symbol('unknown');
const NOWHERE: unique symbol = Symbol('nowhere');

/** Where the shell is after a command, whether it succeeded or failed. */
interface Outcome {
  ok: Place;
  failed: Place;
}

/** A command list being read: the whole line, a `( … )` subshell or a `{ …; }` group. */
interface Frame {
  kind: 'line' | '(' | '{';
  /** Where it began: a subshell's shell is back there when it ends. */
  start: Place;
  /** Where the current and-or list began: a list sent to the background (`&`) leaves the shell there. */
  listStart: Place;
  /** The and-or list so far, null before its first pipeline ends. */
  andOr: Outcome | null;
  /** The last and-or list that ended: a group's outcome. */
  lastList: Outcome | null;
  /** The operator before the pipeline being read. */
  op: '&&' | '||' | null;
  /** Where the pipeline being read began, once a `|` was seen (each part runs in a subshell from there). */
  pipeStart: Place | null;
  /** Where the next command starts. */
  next: Place;
}

/**
 * The word naming the program of each simple command in a shell command line (after
 * `VAR=value` assignments and wrappers such as `env`), with the folder it starts in.
 *
 * The folder follows a literal `cd <dir>` along the line as `/bin/sh` runs it: `cd sub
 * && python3 x.py` starts `python3` in `sub`; so does `cd sub || exit 1; python3 x.py`,
 * and `cd sub && { python3 x.py; }` (how a DVC stage's `wdir` is run). A `cd` inside a
 * subshell `( … )`, a pipeline or a list sent to the background does not outlive it. Where
 * the folder is not known for sure (`cd` with no argument, `-`, `~…`, an option, a `$`
 * word or a glob; `make && cd sub; python3 x.py`, where `make` failing skips the `cd`;
 * after a loop, a branch, `eval` or a function), the program is taken to start in `.`, as
 * every program was before folders were followed: a line without `cd` is keyed as it
 * always was. A `cd` is taken to succeed (`cd sub; python3 x.py` is keyed for `sub`): only
 * a stage whose `cd` fails starts its programs elsewhere than its key says. `CDPATH` (only
 * set when the pipeline passes it, keyed then) is not followed. The command after a group's
 * `{` is read as a command (it was once taken as `{`'s argument, so `cd sub && { python3
 * x.py; }` keyed no program at all).
 */
export function commandPrograms(cmd: string): CommandProgram[] {
  let tokens: ReturnType<typeof parse>;
  try {
    // Variables are left as written: a word made of one is not a program name anyone can key.
    tokens = parse(shellText(cmd), (name) => `$${name}`);
  } catch {
    // The shell will say what is wrong with the line when it runs it.
    return [];
  }
  const programs: CommandProgram[] = [];
  const places = new PlaceTracker();
  let atStart = true;
  let afterRedirect = false;
  let inWrapper = false;
  for (const token of tokens) {
    if (typeof token !== 'string') {
      if ('op' in token && COMMAND_SEPARATORS.has(token.op)) {
        places.separator(token.op);
        atStart = true;
        inWrapper = false;
      } else if ('op' in token && token.op !== 'glob') {
        afterRedirect = true;
      } else {
        places.argument(null);
      }
      continue;
    }
    if (afterRedirect) {
      afterRedirect = false;
      continue;
    }
    if (!atStart) {
      places.argument(token);
      continue;
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(token)) continue;
    if (inWrapper && token.startsWith('-')) continue;
    if (WRAPPERS.has(token)) {
      inWrapper = true;
      places.wrapped();
      continue;
    }
    if (token === '{' && !inWrapper) {
      // A group runs in this shell: the command after `{` is a command like any other.
      places.open('{');
      continue;
    }
    if (token === '}' && !inWrapper && places.inGroup()) {
      places.close('}');
      atStart = false;
      continue;
    }
    if (BEFORE_COMMAND.has(token) && !inWrapper) {
      places.command(token);
      continue;
    }
    atStart = false;
    inWrapper = false;
    places.command(token);
    if (SHELL_OWN.has(token) || token.includes('$')) continue;
    programs.push({ word: token, dir: places.here() });
  }
  return programs;
}

/**
 * The line as shell-quote should read it, in one pass that knows the shell's quotes:
 * - a `#` that begins a word is a comment to the end of its line, cut here (shell-quote
 *   takes one to run to the end of the whole text); one inside a word (`git+https://…#egg=x`)
 *   is a character, escaped (shell-quote would take it for a comment);
 * - a line ending in an unescaped `\` goes on; a newline after an operator (`&&`, `|`,
 *   `;`, `(`, `{`) or a blank line is a space; any other ends its command, as `;` does
 *   (shell-quote reads a newline as a space, which would make the next line's program an
 *   argument). A newline inside quotes, or in a here-document's body, is changed alike: a
 *   quoted word is still one word, and a body's lines are read as commands, keying more
 *   programs, never fewer.
 */
function shellText(cmd: string): string {
  let out = '';
  let quote: "'" | '"' | null = null;
  // The last character outside quotes that is not blank: what a newline comes after.
  let last = '';
  for (let i = 0; i < cmd.length; i += 1) {
    const c = cmd[i] as string;
    if (quote !== null) {
      out += c;
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < cmd.length) out += cmd[++i];
      continue;
    }
    if (c === '\\') {
      const next = cmd[i + 1];
      if (next === '\n' || (next === '\r' && cmd[i + 2] === '\n')) {
        i += next === '\n' ? 1 : 2;
        out += ' ';
      } else if (next !== undefined) {
        out += c + next;
        i += 1;
        last = next;
      }
      continue;
    }
    if (c === '#') {
      if (out === '' || /[\s;&|()]/.test(out[out.length - 1] as string)) {
        while (i + 1 < cmd.length && cmd[i + 1] !== '\n') i += 1;
      } else {
        out += '\\#';
        last = '#';
      }
      continue;
    }
    if (c === '\n') {
      out += last === '' || '&|;({'.includes(last) ? '\n' : ' ;\n';
      last = ';';
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    out += c === '\r' ? ' ' : c;
    if (!/\s/.test(c)) last = c;
  }
  return out;
}

/** Follows the shell's folder through a command line, command by command (see commandPrograms). */
class PlaceTracker {
  private readonly frames: Frame[] = [frameAt('line', '.')];
  /** The current simple command: its name, its arguments (null: not literal), whether a wrapper runs it. */
  private word: string | null = null;
  private args: (string | null)[] = [];
  private isWrapped = false;
  /** A `( … )` or `{ …; }` that just ended, standing as the current command. */
  private group: Outcome | null = null;
  /** Set for good after a command whose effect on the folder cannot be followed. */
  private lost = false;

  /** Where the current command starts, as keyed: `.` when not known. */
  here(): string {
    const place = this.frame.next;
    return this.lost || typeof place !== 'string' ? '.' : place;
  }

  command(word: string): void {
    this.word = word;
    if (OPAQUE.has(word)) this.lost = true;
  }

  argument(word: string | null): void {
    this.args.push(word);
  }

  wrapped(): void {
    this.isWrapped = true;
  }

  inGroup(): boolean {
    return this.frame.kind === '{';
  }

  open(kind: '(' | '{'): void {
    this.frames.push(frameAt(kind, this.frame.next));
  }

  close(kind: ')' | '}'): void {
    this.endPipelinePart(';');
    const frame = this.frames.pop() as Frame;
    // A subshell's `cd` does not outlive it; a group's does, as its last list left it.
    this.group =
      kind === ')'
        ? { ok: frame.start, failed: frame.start }
        : (frame.lastList ?? { ok: frame.start, failed: frame.start });
  }

  separator(op: string): void {
    if (op === '(') {
      // `name() …` defines a function: what it does wherever it is called is not followed.
      if (this.word !== null) this.lost = true;
      this.resetCommand();
      this.open('(');
      return;
    }
    if (op === ')') {
      if (this.frame.kind === '(') this.close(')');
      else this.lost = true;
      return;
    }
    this.endPipelinePart(op);
  }

  private get frame(): Frame {
    return this.frames[this.frames.length - 1] as Frame;
  }

  private resetCommand(): void {
    this.word = null;
    this.args = [];
    this.isWrapped = false;
    this.group = null;
  }

  /** Where the command just read leaves the shell. */
  private commandOutcome(): Outcome {
    const start = this.frame.next;
    if (this.group !== null) return this.group;
    if (this.word === null) return { ok: start, failed: start };
    // `command cd x` and bash's `time cd x` change folder; `env cd x` does not.
    if (this.isWrapped)
      return this.word === 'cd' ? { ok: UNKNOWN, failed: UNKNOWN } : { ok: start, failed: start };
    if (this.word === 'exit' || this.word === 'return') return { ok: NOWHERE, failed: NOWHERE };
    // A `cd` is taken to succeed (its failing path leads nowhere): `cd sub; python3 x.py` is keyed
    // for `sub`, and only a stage whose `cd` fails starts elsewhere than its key says.
    if (this.word === 'cd') return { ok: cdTarget(start, this.args), failed: NOWHERE };
    return { ok: start, failed: start };
  }

  /** The command just read ends at `op`: a pipeline's part, an and-or list's pipeline, or a list. */
  private endPipelinePart(op: string): void {
    const frame = this.frame;
    // Nothing before it (`{ a; }` ends with `;` then `}`): nothing ran.
    if (this.word === null && this.group === null && frame.pipeStart === null) return;
    const outcome = this.commandOutcome();
    this.resetCommand();
    if (op === '|' || op === '|&') {
      frame.pipeStart ??= frame.next;
      frame.next = frame.pipeStart;
      return;
    }
    const pipeStart = frame.pipeStart;
    const pipeline: Outcome = pipeStart === null ? outcome : { ok: pipeStart, failed: pipeStart };
    frame.pipeStart = null;
    const before = frame.andOr;
    const andOr: Outcome =
      before === null || frame.op === null
        ? pipeline
        : frame.op === '&&'
          ? { ok: pipeline.ok, failed: either(before.failed, pipeline.failed) }
          : { ok: either(before.ok, pipeline.ok), failed: pipeline.failed };
    frame.andOr = andOr;
    if (op === '&&' || op === '||') {
      frame.op = op;
      frame.next = op === '&&' ? andOr.ok : andOr.failed;
      return;
    }
    const after = op === '&' ? frame.listStart : either(andOr.ok, andOr.failed);
    frame.lastList = op === '&' ? { ok: after, failed: after } : andOr;
    frame.andOr = null;
    frame.op = null;
    frame.listStart = after;
    frame.next = after;
  }
}

function frameAt(kind: Frame['kind'], start: Place): Frame {
  return {
    kind,
    start,
    listStart: start,
    andOr: null,
    lastList: null,
    op: null,
    pipeStart: null,
    next: start,
  };
}

/** Where one of two paths leads. */
function either(a: Place, b: Place): Place {
  if (a === NOWHERE) return b;
  if (b === NOWHERE) return a;
  return a === b ? a : UNKNOWN;
}

/** Where `cd` with these arguments goes from `start`, when it succeeds. */
function cdTarget(start: Place, args: readonly (string | null)[]): Place {
  const [target] = args;
  // No argument goes home; `-` back; `~…` home; options and more words change what it does.
  if (args.length !== 1 || !target || target.startsWith('-') || target.startsWith('~')) return UNKNOWN;
  if (target.includes('$')) return UNKNOWN;
  if (path.isAbsolute(target)) return withoutTrailingSlash(path.normalize(target));
  if (typeof start !== 'string') return start;
  return withoutTrailingSlash(path.join(start, target));
}

function withoutTrailingSlash(dir: string): string {
  return dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir;
}

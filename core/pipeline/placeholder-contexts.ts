/** Where a `${name}` sits in the shell's grammar, as far as quoting its value is concerned. */
export type QuotingContext = 'plain' | 'single quotes' | 'double quotes';

/** One `${name}` of a command: where it starts and ends, and its quoting context. */
export interface Placeholder {
  name: string;
  start: number;
  end: number;
  /** Where a quoted value stays one literal word, or else a phrase saying where it is instead. */
  context: QuotingContext | { unsafe: string };
}

const PLACEHOLDER = /\$\{([^}]*)\}/g;

type Frame = 'top' | 'sq' | 'dq' | 'ansi' | 'bq' | 'cmdsub' | 'arith' | 'comment';

const WHERE: Record<Frame, string> = {
  top: 'plain',
  sq: 'single quotes',
  dq: 'double quotes',
  ansi: "$'…' quotes",
  bq: 'backquotes `…`',
  cmdsub: 'a command substitution $(…)',
  arith: 'an arithmetic expansion $((…))',
  comment: 'a comment',
};

/**
 * Finds every `${name}` of a stage's command and the quoting context the shell
 * (`/bin/sh -c`) will read it in, by scanning quote state as POSIX sh does: backslash
 * escapes, '…', "…", $'…', `…`, $(…), $((…)), comments and here-documents. Only
 * three contexts have a quoting of the value that keeps it one literal word — plain
 * words, and single or double quotes at the top level of the command — so everything
 * else is reported `unsafe`, with the phrase a validation error shows. The scanner is
 * deliberately conservative: past a construct it does not model (a `case` inside a
 * command substitution, an unbalanced parenthesis, a here-document's body), every
 * later placeholder is unsafe, because guessing a quote state wrong is how a value
 * breaks out.
 */
export function placeholderContexts(cmd: string): Placeholder[] {
  const starts = new Map<number, { name: string; end: number }>();
  for (const match of cmd.matchAll(PLACEHOLDER)) {
    starts.set(match.index, { name: match[1] ?? '', end: match.index + match[0].length });
  }
  const found: Placeholder[] = [];
  const stack: Frame[] = ['top'];
  const depths: number[] = [0];
  let lost: string | null = null;
  let heredocPending = false;
  let wordStart = true;

  const record = (at: number, context: Placeholder['context']) => {
    const placeholder = starts.get(at);
    if (!placeholder) return false;
    found.push({ name: placeholder.name, start: at, end: placeholder.end, context });
    return true;
  };
  const push = (frame: Frame) => {
    stack.push(frame);
    depths.push(0);
  };
  const pop = () => {
    stack.pop();
    depths.pop();
    wordStart = false;
  };

  let i = 0;
  while (i < cmd.length) {
    const frame = stack[stack.length - 1] as Frame;
    const char = cmd[i] as string;
    const next = cmd[i + 1];

    const placeholder = starts.get(i);
    if (placeholder) {
      const outer = stack.find((each) => each !== 'top' && each !== 'sq' && each !== 'dq') ?? frame;
      const context: Placeholder['context'] =
        lost !== null
          ? { unsafe: lost }
          : stack.length === 1
            ? 'plain'
            : stack.length === 2 && (frame === 'sq' || frame === 'dq')
              ? (WHERE[frame] as QuotingContext)
              : { unsafe: WHERE[outer] };
      record(i, context);
      i = placeholder.end;
      wordStart = false;
      continue;
    }

    if (frame === 'comment') {
      if (char === '\n') pop();
      i += 1;
      continue;
    }
    if (frame === 'sq') {
      if (char === "'") pop();
      i += 1;
      continue;
    }
    if (frame === 'ansi' || frame === 'bq') {
      if (char === '\\') {
        if (record(i + 1, { unsafe: WHERE[frame] })) i = (starts.get(i + 1) as { end: number }).end;
        else i += 2;
        continue;
      }
      if ((frame === 'ansi' && char === "'") || (frame === 'bq' && char === '`')) pop();
      // Quotes inside backquotes end where sh's reading of them says, which varies by shell.
      else if (frame === 'bq' && (char === "'" || char === '"'))
        lost ??= 'a part of the command after quotes inside backquotes';
      i += 1;
      continue;
    }

    if (char === '\\') {
      if (record(i + 1, { unsafe: 'right after a backslash' }))
        i = (starts.get(i + 1) as { end: number }).end;
      else i += 2;
      wordStart = false;
      continue;
    }
    if (char === '`') {
      push('bq');
      i += 1;
      continue;
    }
    if (char === '$') {
      if (next === '(' && cmd[i + 2] === '(') {
        push('arith');
        i += 3;
      } else if (next === '(') {
        push('cmdsub');
        i += 2;
        wordStart = true;
      } else if (next === "'" && frame !== 'dq') {
        push('ansi');
        i += 2;
      } else {
        if (record(i + 1, { unsafe: 'right after a $' })) i = (starts.get(i + 1) as { end: number }).end;
        else i += 1;
        wordStart = false;
      }
      continue;
    }
    if (frame === 'dq') {
      if (char === '"') pop();
      i += 1;
      continue;
    }
    if (char === "'") push('sq');
    else if (char === '"') push('dq');
    else if (char === '#' && wordStart && frame !== 'arith') push('comment');
    else if (char === '(') depths[depths.length - 1] = (depths.at(-1) ?? 0) + 1;
    else if (char === ')') {
      const depth = (depths.at(-1) ?? 0) - 1;
      if (depth >= 0) depths[depths.length - 1] = depth;
      else if (frame === 'arith' && next === ')') {
        pop();
        i += 2;
        continue;
      } else if (frame === 'cmdsub' || frame === 'arith') pop();
      else lost ??= 'a part of the command after an unbalanced ")"';
    } else if (char === '<' && next === '<' && cmd[i + 2] !== '<') heredocPending = true;
    else if (char === '\n' && heredocPending) lost ??= 'a here-document';
    else if (frame === 'cmdsub' && wordStart && /^case\b/.test(cmd.slice(i))) {
      lost ??= 'a part of the command after a case inside $(…)';
    }
    wordStart = /[\s;&|()<>]/.test(char) && stack.at(-1) !== 'sq' && stack.at(-1) !== 'dq';
    i += 1;
  }
  // A placeholder the scan stepped over sits somewhere it did not model.
  const seen = new Set(found.map((placeholder) => placeholder.start));
  for (const [start, placeholder] of starts) {
    if (!seen.has(start))
      found.push({ ...placeholder, start, context: { unsafe: 'a part of the command fluksio cannot read' } });
  }
  return found.sort((a, b) => a.start - b.start);
}

import { spawn } from 'node:child_process';
import { quote } from 'shell-quote';
import { TEST_BUNDLE } from '../global-setup.js';

/** A `fluksio` process on a pseudo-terminal, and what the terminal showed so far. */
export interface TerminalProcess {
  /** Everything the terminal received, escape sequences included, `\r\n` as `\n`. */
  output(): string;
  /** Resolves with the first line matching, or rejects after `timeoutMs` with the output. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Types at the terminal: `'\x03'` is Ctrl-C (the terminal sends SIGINT to the foreground). */
  type(text: string): void;
  /** The exit code, once the process has ended. */
  exited: Promise<number>;
}

/**
 * Starts the `fluksio` command on a real pseudo-terminal (util-linux `script`) of
 * `columns` columns, with exactly the environment given (plus PATH and HOME), as a user's
 * shell would: stdout and stderr are the terminal, Ctrl-C is a keystroke.
 */
export function runInTerminal(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; columns?: number },
): TerminalProcess {
  const columns = options.columns ?? 70;
  const command = `stty cols ${columns} rows 50; exec ${quote([process.execPath, TEST_BUNDLE, ...args])}`;
  const child = spawn('script', ['--quiet', '--flush', '--return', '--command', command, '/dev/null'], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm-256color', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let text = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const find = (pattern: RegExp) => text.split('\n').find((line) => pattern.test(line));
  const onData = (chunk: Buffer) => {
    text += chunk.toString().replaceAll('\r\n', '\n');
    for (const waiter of [...waiters]) {
      const match = find(waiter.pattern);
      if (match !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number>((resolve) => {
    child.on('exit', (code) => {
      child.stdin.end();
      resolve(code ?? -1);
    });
  });
  return {
    output: () => text,
    exited,
    type: (keys) => child.stdin.write(keys),
    waitFor(pattern, timeoutMs = 60_000) {
      const found = find(pattern);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`No line matching ${pattern} within ${timeoutMs} ms; terminal:\n${text}`)),
          timeoutMs,
        );
        waiters.push({
          pattern,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
      });
    },
  };
}

/** The widest line of `text` as a terminal shows it (escape sequences take no room). */
export function widestLine(text: string): number {
  // eslint-disable-next-line no-control-regex
  const plain = text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
  return Math.max(0, ...plain.split('\n').map((line) => [...line].length));
}

/** Whether `text` holds an ANSI colour or style sequence (SGR). */
export function hasColor(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /\u001b\[[0-9;]*m/.test(text);
}

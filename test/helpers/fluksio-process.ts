import { spawn, type ChildProcess } from 'node:child_process';
import { TEST_BUNDLE } from '../global-setup.js';

/** A running `fluksio` process and what it printed so far. */
export interface FluksioProcess {
  child: ChildProcess;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves when a line of output matches, or rejects after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<number | string>;
  /** Sends a signal and waits for the process to end. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/**
 * Starts the `fluksio` command (bundled from the sources by the global setup) as a real
 * process, with exactly the environment given (plus PATH and HOME), capturing its output.
 */
export function spawnFluksio(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): FluksioProcess {
  const child = spawn(process.execPath, [TEST_BUNDLE, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const waiter of [...waiters]) {
      const match = text.split('\n').find((line) => waiter.pattern.test(line));
      if (match !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | string>((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? signal ?? -1));
  });
  return {
    child,
    output: () => text,
    exited,
    waitFor(pattern, timeoutMs = 30_000) {
      const found = text.split('\n').find((line) => pattern.test(line));
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`No line matching ${pattern} within ${timeoutMs} ms; output:\n${text}`)),
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
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

import { execFile, spawn, type ChildProcess } from 'node:child_process';
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

/** What a finished `fluksio` process printed, apart, and its exit code. */
export interface FluksioResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the `fluksio` command (the bundle under test) as a real process to its end, with
 * exactly the environment given (plus PATH, HOME and NO_COLOR), its stdout a pipe kept
 * apart from its stderr (for `--json`).
 */
export function runFluksio(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<FluksioResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [TEST_BUNDLE, ...args],
      {
        cwd: options.cwd,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...options.env },
        maxBuffer: 64 << 20,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        if (code === null) reject(error ?? new Error('fluksio ended without an exit code'));
        else resolve({ code, stdout, stderr });
      },
    );
  });
}

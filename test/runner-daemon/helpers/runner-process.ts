import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { RunnerCommandOptions } from '../../../cli/commands/runner-command.js';

/** A `fluksio runner` process started by a test. */
export interface RunnerProcess {
  child: ChildProcess;
  /** Everything it printed so far (its log lines are JSON on stdout). */
  output(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

const MAIN = path.join(import.meta.dirname, 'runner-main.ts');

/** Starts a real runner process with these options and this environment on top of the test's. */
export function startRunner(
  options: RunnerCommandOptions,
  env: Record<string, string | undefined>,
): RunnerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN, JSON.stringify(options)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

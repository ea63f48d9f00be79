import { spawn, type ChildProcess } from 'node:child_process';
import type { RunnerCommandOptions } from '../../../cli/commands/runner-command.js';
import { TEST_BUNDLE } from '../../global-setup.js';

/** A `fluksio runner` process started by a test. */
export interface RunnerProcess {
  child: ChildProcess;
  /** Everything it printed so far (its log lines are JSON on stdout). */
  output(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** The command line a user types for these options (cli/server-commands.ts). */
function runnerArgs(options: RunnerCommandOptions): string[] {
  const valued: [keyof RunnerCommandOptions, string][] = [
    ['workDir', '--work-dir'],
    ['concurrency', '--concurrency'],
    ['backend', '--backend'],
    ['jobs', '--jobs'],
    ['stageUser', '--stage-user'],
    ['envFile', '--env-file'],
    ['tokenFile', '--token-file'],
    ['url', '--url'],
  ];
  const args = ['runner'];
  for (const [name, flag] of valued) {
    const value = options[name];
    if (typeof value === 'string') args.push(flag, value);
  }
  if (options.acceptForks) args.push('--accept-forks');
  if (options.sandbox) args.push('--sandbox');
  return args;
}

/**
 * Starts `fluksio runner` (the bundle the global setup made from the sources) as a real
 * process with these options as flags, and this environment on top of the test's: the
 * command as a user starts it, without compiling TypeScript at each start (~1.5 s here).
 */
export function startRunner(
  options: RunnerCommandOptions,
  env: Record<string, string | undefined>,
): RunnerProcess {
  const child = spawn(process.execPath, [TEST_BUNDLE, ...runnerArgs(options)], {
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

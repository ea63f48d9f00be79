import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The built `fluksio` command (`npm run bench` builds it first) as a process. */
export function fluksio(args: string[], cwd: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [join(root, 'bin', 'fluksio.js'), ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** The first line of a process's output matching `pattern`. */
export function lineOf(child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const match = pattern.exec(text);
      if (match) resolve(match);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited ${code} before ${pattern}:\n${text}`)));
  });
}

/** Resolves once the process has ended (at once when it has, or never started). */
export async function exited(child: ChildProcess | null): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => child.once('exit', resolve));
}

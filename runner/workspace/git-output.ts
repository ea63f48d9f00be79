import { execFile } from 'node:child_process';
import type { RepositoryConfigGuard } from './repository-config-guard.js';

/**
 * The output of `git <args>` run in `cwd`; rejects with git's own error message. node's
 * execFile rather than simple-git for the commands every `fluksio run` makes while it
 * reads the code index: simple-git's task queue and plugins cost a warm 5,000-file read
 * several milliseconds a command. With a `guard`, git runs nothing the repository's config
 * names (repository-config-guard.ts).
 */
export function gitOutput(
  cwd: string,
  args: string[],
  guard: RepositoryConfigGuard | null = null,
): Promise<string> {
  const options = {
    cwd,
    maxBuffer: Infinity,
    encoding: 'utf8' as const,
    ...(guard ? { env: guard.environment(process.env) } : {}),
  };
  return new Promise((resolve, reject) => {
    execFile('git', [...(guard?.args ?? []), ...args], options, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else
        reject(
          new Error(`git ${args[0]} failed in ${cwd}: ${stderr.trim() || error.message}`, { cause: error }),
        );
    });
  });
}

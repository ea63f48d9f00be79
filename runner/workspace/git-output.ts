import { execFile } from 'node:child_process';

/**
 * The output of `git <args>` run in `cwd`; rejects with git's own error message. node's
 * execFile rather than simple-git for the commands every `fluksio run` makes while it
 * reads the code index: simple-git's task queue and plugins cost a warm 5,000-file read
 * several milliseconds a command.
 */
export function gitOutput(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, maxBuffer: Infinity, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else
        reject(
          new Error(`git ${args[0]} failed in ${cwd}: ${stderr.trim() || error.message}`, { cause: error }),
        );
    });
  });
}

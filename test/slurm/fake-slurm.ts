import { execFile } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** What one call of a stand-in command does: print and exit, or run the real command. */
export type FakeReply = { stdout?: string; stderr?: string; code?: number } | { real: string };

/** A string as one bash word, quoted. */
const quoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/**
 * Puts a command `name` in `dir` (a directory put first on a test's PATH) whose n-th call
 * answers `replies[n]`, the last reply every call after; each call's arguments are
 * appended to `dir/calls` as `name ARGS`. It uses bash builtins only, so it works with
 * `dir` as the whole PATH. `{ real }` runs the command at that path with the same
 * arguments: a failure for the first calls, then the real Slurm.
 */
export async function fakeCommand(dir: string, name: string, replies: readonly FakeReply[]): Promise<void> {
  const cases = replies.map((reply, index) => {
    const pattern = index === replies.length - 1 ? '*' : String(index);
    if ('real' in reply) return `  ${pattern}) exec ${quoted(reply.real)} "$@" ;;`;
    const out = reply.stdout === undefined ? '' : `printf '%s\\n' ${quoted(reply.stdout)}; `;
    const err = reply.stderr === undefined ? '' : `printf '%s\\n' ${quoted(reply.stderr)} >&2; `;
    return `  ${pattern}) ${out}${err}exit ${reply.code ?? 0} ;;`;
  });
  const script = `#!/bin/bash
count=${quoted(join(dir, `${name}.count`))}
n=0
[ -e "$count" ] && n=$(<"$count")
printf '%s\\n' $((n + 1)) >"$count"
printf '%s %s\\n' ${quoted(name)} "$*" >>${quoted(join(dir, 'calls'))}
case $n in
${cases.join('\n')}
esac
`;
  const file = join(dir, name);
  await writeFile(file, script);
  await chmod(file, 0o755);
}

/** The calls the stand-ins in `dir` took, in order: `squeue --noheader …`. */
export async function fakeCalls(dir: string): Promise<string[]> {
  return (await readFile(join(dir, 'calls'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

/** Where a real Slurm command lives, for `{ real }` replies. */
export async function realCommand(name: string): Promise<string> {
  const { stdout } = await run('bash', ['-c', `command -v ${name}`]);
  return stdout.trim();
}

/** What slurmctld's clients print when they cannot reach it (a transient failure). */
export const UNREACHABLE: FakeReply = {
  stderr: 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)',
  code: 1,
};
/** What squeue and scontrol print for a job slurmctld does not know (or no longer). */
export const INVALID_JOB: FakeReply = {
  stderr: 'slurm_load_jobs error: Invalid job id specified',
  code: 1,
};
/** What sacct prints on a cluster that keeps no accounting. */
export const NO_ACCOUNTING: FakeReply = { stderr: 'Slurm accounting storage is disabled', code: 1 };
/** What sacct prints (last) when slurmdbd does not answer: down or restarting. */
export const DBD_UNREACHABLE: FakeReply = {
  stderr: 'sacct: error: Problem talking to the database: Connection refused',
  code: 1,
};

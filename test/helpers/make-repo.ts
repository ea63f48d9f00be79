import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface MakeRepoOptions {
  /** Repository-relative path → content, written before the first commit. */
  files: Record<string, string>;
  /** Commit the files. @defaultValue true */
  commit?: boolean;
  /** `git init --object-format`. @defaultValue 'sha1' */
  objectFormat?: 'sha1' | 'sha256';
}

export interface TestRepo {
  /** The work tree, a real path (no symlinked temp directory in between). */
  dir: string;
  /** Runs git in the repository; resolves with its stdout. */
  git(...args: string[]): Promise<string>;
  write(relPath: string, content: string): Promise<void>;
  /** Stages everything and commits; resolves with the new commit id. */
  commitAll(message: string): Promise<string>;
  cleanup(): Promise<void>;
}

/**
 * A real git repository in a fresh temporary directory, with a local identity and no
 * signing, so tests run the same on any machine. GIT_* variables are dropped: a test
 * started from inside a git hook must not act on the outer repository.
 */
export async function makeRepo({
  files,
  commit = true,
  objectFormat = 'sha1',
}: MakeRepoOptions): Promise<TestRepo> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'fluksio-repo-')));
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('GIT_')));
  const git = async (...args: string[]) =>
    (await run('git', args, { cwd: dir, env, maxBuffer: 64 << 20 })).stdout;
  const write = async (relPath: string, content: string) => {
    await mkdir(path.dirname(path.join(dir, relPath)), { recursive: true });
    await writeFile(path.join(dir, relPath), content);
  };
  const commitAll = async (message: string) => {
    await git('add', '--all');
    await git('commit', '--quiet', '--allow-empty', '--message', message);
    return (await git('rev-parse', 'HEAD')).trim();
  };

  await git('init', '--quiet', '--initial-branch=main', `--object-format=${objectFormat}`);
  await git('config', 'user.name', 'fluksio test');
  await git('config', 'user.email', 'test@fluksio.invalid');
  await git('config', 'commit.gpgsign', 'false');
  for (const [relPath, content] of Object.entries(files)) await write(relPath, content);
  if (commit) await commitAll('initial');
  return { dir, git, write, commitAll, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

import { randomUUID } from 'node:crypto';
import { lstat, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/* The files fluksio writes into the git directories it keeps: written whole, never edited. */

/**
 * Makes what git reads from the mirror ours again before every use: its whole config,
 * and no borrowed objects. Written only at creation, a config a stage had rewritten
 * (`core.alternateRefsCommand`, `include.path`, `http.sslVerify`) or an
 * `objects/info/alternates` it had added would act in every later run's fetch; the
 * sandbox keeps stages away from the mirror, and this keeps an unsandboxed one's edit
 * from outliving its run.
 */
export async function resetMirrorConfig(mirror: string, commit: string): Promise<void> {
  await replaceFile(path.join(mirror, 'config'), mirrorConfig(commit));
  await Promise.all(
    ['alternates', 'http-alternates'].map((name) =>
      rm(path.join(mirror, 'objects', 'info', name), { force: true, recursive: true }),
    ),
  );
}

/**
 * Writes a file by renaming a new one over it: a symlink in its place is replaced, never
 * followed.
 */
export async function replaceFile(file: string, text: string): Promise<void> {
  const temp = `${file}.${randomUUID()}.tmp`;
  try {
    await writeFile(temp, text, { flag: 'wx' });
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * Whether a checkout's `.git` is as git made it where the runner writes: real
 * directories down to `objects/info`, no symlinked `HEAD` or `config`. Absent counts as
 * plain (there is nothing to follow).
 */
export async function isPlainGitDir(gitDir: string): Promise<boolean> {
  const kind = async (file: string) =>
    lstat(file).then(
      (stats) => (stats.isSymbolicLink() ? 'symlink' : stats.isDirectory() ? 'directory' : 'file'),
      () => 'absent',
    );
  for (const dir of [gitDir, path.join(gitDir, 'objects'), path.join(gitDir, 'objects', 'info')]) {
    if (!['directory', 'absent'].includes(await kind(dir))) return false;
  }
  for (const file of ['HEAD', 'config'].map((name) => path.join(gitDir, name))) {
    if ((await kind(file)) === 'symlink') return false;
  }
  return true;
}

/**
 * Lock files a runner killed in the middle of a git command left behind. Only this
 * runner uses the work directory (it is locked) and a mirror is fetched into by one slot
 * at a time, so a lock found here is stale, and it would fail every later run.
 */
export async function removeStaleLocks(gitDir: string, names: string[]): Promise<void> {
  await Promise.all(names.map((name) => rm(path.join(gitDir, name), { force: true })));
}

/** The mirror's whole `config`: a bare repository of the commit's object format. */
export function mirrorConfig(commit: string): string {
  const sha256 = formatOf(commit) === 'sha256';
  return [
    '[core]',
    `\trepositoryformatversion = ${sha256 ? 1 : 0}`,
    '\tbare = true',
    '\tlogallrefupdates = false',
    ...(sha256 ? ['[extensions]', '\tobjectformat = sha256'] : []),
    '',
  ].join('\n');
}

/** The checkout's whole `.git/config`. */
export function checkoutConfig(url: string, commit: string): string {
  const sha256 = formatOf(commit) === 'sha256';
  const quoted = url.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  return [
    '[core]',
    `\trepositoryformatversion = ${sha256 ? 1 : 0}`,
    '\tbare = false',
    '\tlogallrefupdates = false',
    ...(sha256 ? ['[extensions]', '\tobjectformat = sha256'] : []),
    '[remote "origin"]',
    `\turl = "${quoted}"`,
    '',
  ].join('\n');
}

/** A commit's object format, by its length: 64 hex digits are sha256. */
export function formatOf(commit: string): 'sha1' | 'sha256' {
  return commit.length === 64 ? 'sha256' : 'sha1';
}

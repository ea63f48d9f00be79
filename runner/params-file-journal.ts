import { createHash, randomUUID } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { z } from 'zod';

/** One params file as it was before a stage's values were written into it. */
const JournalEntry = z.strictObject({
  /** The process that wrote the values in. */
  pid: z.number().int().positive(),
  /** The file's absolute path. */
  path: z.string().min(1),
  /** Its bytes before, base64. */
  original: z.string(),
  /** The SHA-256 of what was written in its place, hex. */
  written: z.string().regex(/^[0-9a-f]{64}$/),
});
type JournalEntry = z.infer<typeof JournalEntry>;

/** What putting back found: files put back, and files left because someone edited them since. */
export interface PutBack {
  restored: string[];
  keptEdited: string[];
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

/**
 * The record of DVC params files that hold a stage's values, kept under the pipeline's
 * `.fluksio/` (which git and the code digest never see) so that a run killed outright
 * (SIGKILL, a power cut) does not leave its values in the user's `params.yaml`.
 */
export class ParamsFileJournal {
  private readonly dir: string;

  constructor(pipelineDir: string) {
    this.dir = join(pipelineDir, '.fluksio', 'params-backup');
  }

  /** Where the entry for the file at `path` is kept. */
  entryPath(path: string): string {
    return join(this.dir, `${sha256(path).slice(0, 32)}.json`);
  }

  /** Records `original` before `written` replaces it at `path` (durably named: write, then rename). */
  async record(path: string, original: Buffer, written: string): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const entry: JournalEntry = {
      pid: process.pid,
      path,
      original: original.toString('base64'),
      written: sha256(written),
    };
    const target = this.entryPath(path);
    // A fresh name, created exclusively: never a link someone left in the folder.
    const temporary = `${target}.${randomUUID()}.tmp`;
    await writeFile(temporary, JSON.stringify(entry), { flag: 'wx' });
    await rename(temporary, target);
  }

  /** Drops the entry for `path`, once the file is put back. */
  async forget(path: string): Promise<void> {
    await rm(this.entryPath(path), { force: true });
  }

  /**
   * Puts back every file a process that is no longer running left holding a stage's values.
   * A file edited since (its bytes are not what was written) is left as it is, and said.
   * Entries of a live process (a run still going here) are left alone; an entry naming a
   * file outside `repoRoot`, or a link, is dropped.
   */
  async putBack(repoRoot: string): Promise<PutBack> {
    const root = await realpath(repoRoot);
    const result: PutBack = { restored: [], keptEdited: [] };
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names.filter((file) => file.endsWith('.json'))) {
      const entryFile = join(this.dir, name);
      const parsed = JournalEntry.safeParse(await readJson(entryFile));
      if (!parsed.success) {
        await rm(entryFile, { force: true });
        continue;
      }
      const entry = parsed.data;
      if (isRunning(entry.pid)) continue;
      // Only a regular file inside the repository is put back, never through a link.
      const real = await realpath(entry.path).catch(() => null);
      const stats = await lstat(entry.path).catch(() => null);
      if (real === null || !real.startsWith(root + sep) || !stats?.isFile()) {
        await rm(entryFile, { force: true });
        continue;
      }
      const now = await readFile(entry.path).catch(() => null);
      if (now !== null && sha256(now) === entry.written) {
        await writeFile(entry.path, Buffer.from(entry.original, 'base64'));
        result.restored.push(entry.path);
      } else if (now !== null && !now.equals(Buffer.from(entry.original, 'base64'))) {
        result.keptEdited.push(entry.path);
      }
      await rm(entryFile, { force: true });
    }
    return result;
  }
}

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return null;
  }
}

/** Whether a process with this id runs (one that cannot be signalled still runs). */
function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

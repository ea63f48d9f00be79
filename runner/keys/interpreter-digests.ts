import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ONE_SHOT_PARSE } from '../../schemas/one-shot-parse.js';

/** What a digest was computed from: a file with other values here has other bytes, or may have. */
const Remembered = z.strictObject({ stat: z.string(), digest: z.string() });
const RememberedFile = z.record(z.string(), Remembered);

/**
 * The sha256 of program files (interpreters), remembered by their (device, inode, size,
 * mtime, ctime) so that a run whose programs have not changed reads none of them — a
 * Python binary is megabytes, and a cached run must cost next to nothing. ctime cannot be
 * set back by a user, so an edit that restores a file's mtime is still seen. With a file,
 * what was learnt is kept there for the next run (written by `save`); a file that cannot
 * be read or parsed is ignored.
 */
export class InterpreterDigests {
  private known: Map<string, z.infer<typeof Remembered>> | null = null;
  private changed = false;
  /** Hashes under way, by path and stat key: callers asking at once share one read. */
  private readonly hashing = new Map<string, Promise<string>>();

  /** @param file where digests are kept between runs; null keeps them in memory only */
  constructor(private readonly file: string | null) {}

  /** `sha256:<hex>` of the file at `realPath` (a real path, symlinks already followed). */
  async digestOf(realPath: string): Promise<string> {
    const known = await this.load();
    const stats = await stat(realPath, { bigint: true });
    const key = [stats.dev, stats.ino, stats.size, stats.mtimeNs, stats.ctimeNs].join(':');
    const remembered = known.get(realPath);
    if (remembered?.stat === key) return remembered.digest;
    // A run's early launcher probe and its first stage's key can ask for one binary at once.
    const underWay = `${realPath}\0${key}`;
    const shared = this.hashing.get(underWay);
    if (shared) return shared;
    const hashing = hashFile(realPath)
      .then((digest) => {
        known.set(realPath, { stat: key, digest });
        this.changed = true;
        return digest;
      })
      .finally(() => this.hashing.delete(underWay));
    this.hashing.set(underWay, hashing);
    return hashing;
  }

  /** Writes what was learnt, atomically; a failure only costs hashing again next time. */
  async save(): Promise<void> {
    if (!this.file || !this.changed || !this.known) return;
    // Runs of one runner share the file: each writes a temporary file of its own, then renames.
    const temporary = `${this.file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await mkdir(dirname(this.file), { recursive: true });
      await writeFile(temporary, JSON.stringify(Object.fromEntries(this.known)));
      await rename(temporary, this.file);
      this.changed = false;
    } catch {
      // The cache is an optimisation; the digests were right either way.
    }
  }

  private async load(): Promise<Map<string, z.infer<typeof Remembered>>> {
    if (this.known) return this.known;
    let entries: Record<string, z.infer<typeof Remembered>> = {};
    if (this.file) {
      let raw: unknown = null;
      try {
        raw = JSON.parse(await readFile(this.file, 'utf8'));
      } catch {
        // Absent or damaged: everything is hashed again and the file rewritten.
      }
      const parsed = RememberedFile.safeParse(raw, ONE_SHOT_PARSE);
      if (parsed.success) entries = parsed.data;
    }
    this.known ??= new Map(Object.entries(entries));
    return this.known;
  }
}

async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha256:${hash.digest('hex')}`;
}

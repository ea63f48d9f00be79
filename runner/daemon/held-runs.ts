import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { formatPath } from '../../core/problem.js';
import { LeaseId } from '../../schemas/protocol/lease-id.js';

/** A run a runner holds, as recorded in its work directory: what it needs to resume it. */
export const HeldRun = z.strictObject({
  /** A ULID; the record's file is named after it. */
  runId: z
    .string()
    .regex(/^[0-9A-Za-z_-]{1,64}$/, { error: 'expected a run id (letters, digits, "-" and "_")' }),
  attempt: z.number().int().positive(),
  /** The run's lease: a credential, so the file is the runner's alone (0600) and never logged. */
  lease: LeaseId,
  /** The concurrency slot it ran in: its checkout, where its jobs run, is the slot's. */
  slot: z.number().int().nonnegative(),
  /**
   * The lease's epoch its writes carry: 0 from the claim, its last resume's after that. A
   * run refused at the next start is given back under it. @defaultValue 0 (a record
   * written before epochs)
   */
  epoch: z.number().int().nonnegative().default(0),
});
export type HeldRun = z.output<typeof HeldRun>;

/** The records found, and the files that could not be read as one (removed), each `file: problem`. */
export interface HeldRunList {
  held: HeldRun[];
  unreadable: string[];
}

/**
 * The runs a runner holds, one file each under `<workDir>/held-runs/`, so that a runner
 * killed hard (kill -9, the OOM killer) and started again knows which runs to resume
 * (resume-held-runs.ts). A record is written when a run is claimed and removed once the
 * run ended on this runner (finished, released, or its lease lost). Each file is written
 * to a temporary name with mode 0600 and renamed over the record, so a reader finds the
 * whole record or none.
 */
export class HeldRuns {
  private readonly dir: string;

  /** @param workDir the runner's work directory: records go in its `held-runs/` */
  constructor(workDir: string) {
    this.dir = path.join(workDir, 'held-runs');
  }

  /** Records (or records again) a run held. */
  async record(run: z.input<typeof HeldRun>): Promise<void> {
    const checked = HeldRun.parse(run);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = this.fileOf(checked.runId);
    const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(checked)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file).catch(async (error: unknown) => {
      await rm(temporary, { force: true });
      throw error;
    });
  }

  /** Forgets a run: it ended here, or it cannot be resumed. */
  async forget(runId: string): Promise<void> {
    await rm(this.fileOf(runId), { force: true });
  }

  /**
   * Every run recorded. A file that is not a record (cut short, edited) is removed and
   * named in `unreadable` with what is wrong, never with its content: it may hold a lease.
   */
  async list(): Promise<HeldRunList> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    const held: HeldRun[] = [];
    const unreadable: string[] = [];
    for (const name of names.sort()) {
      const file = path.join(this.dir, name);
      // A temporary file is what a runner killed while writing a record left.
      if (name.endsWith('.tmp')) {
        await rm(file, { force: true });
        continue;
      }
      const problem = await readRecord(file, name, held);
      if (problem !== null) {
        unreadable.push(`${path.join(path.basename(this.dir), name)}: ${problem}`);
        await rm(file, { recursive: true, force: true });
      }
    }
    return { held, unreadable };
  }

  private fileOf(runId: string): string {
    return path.join(this.dir, `${runId}.json`);
  }
}

/** Reads one record into `held`; what is wrong with the file otherwise, or null. */
async function readRecord(file: string, name: string, held: HeldRun[]): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return `could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which may hold a lease.
    return 'is not JSON; expected a held-run record';
  }
  const parsed = HeldRun.safeParse(value);
  if (!parsed.success) {
    return parsed.error.issues
      .map((issue) => `${formatPath(issue.path) || 'record'}: ${issue.message}`)
      .join('; ');
  }
  if (name !== `${parsed.data.runId}.json`) return `names run ${parsed.data.runId}; expected ${name}`;
  held.push(parsed.data);
  return null;
}

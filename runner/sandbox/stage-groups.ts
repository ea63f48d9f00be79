import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import {
  groupExists,
  groupGone,
  signalGroup,
  type LaunchedStage,
  type StageLauncher,
} from './stage-launcher.js';
import type { StageUsage } from '../../schemas/stage-usage.js';
import type { JobEnd } from './job-status-line.js';

/** One stage process group a runner started, as recorded in its work directory. */
const StageGroup = z.strictObject({
  /** The stage's shell: its pid, which is its process group's id. */
  pid: z.number().int().positive(),
  /** When it started, in clock ticks since boot (/proc/PID/stat): a pid used again differs. */
  startTicks: z.string().regex(/^\d+$/),
  /** The boot it started in (/proc/sys/kernel/random/boot_id): after a reboot nothing is left. */
  bootId: z.string().min(1),
  runId: z.string(),
  stage: z.string().nullable(),
});
type StageGroup = z.output<typeof StageGroup>;

/** How long the processes of a group killed as left over are given to disappear. */
const GONE_WAIT_MS = 5000;

/** A stage's process group that outlived the process that started it, ended. */
export interface LeftoverGroup {
  runId: string;
  stage: string | null;
  pid: number;
  /** Whether every process of it is gone; false when some still were after a few seconds. */
  gone: boolean;
}

/**
 * The stage process groups a runner (or a `fluksio run`) has running, one file each in
 * `dir`, so that what started them, killed hard (kill -9, the OOM killer, a crash), can be
 * followed by someone ending what its stages left running (killLeftovers): otherwise a
 * stage killed with nobody to read its output goes on training unseen, holding its GPU,
 * and writing into the checkout the run's next attempt is made in. A group is recorded as
 * soon as it is spawned and forgotten once it is gone.
 *
 * A pid is only a number: a record names its process by its start time and the boot it
 * started in too, and a group whose leader is now another process is never signalled.
 * This needs Linux's /proc; elsewhere nothing is recorded and leftovers stay, as before.
 */
export class StageGroups {
  private readonly bootId: string | null;

  /** @param dir where the records go; made when the first is written */
  constructor(private readonly dir: string) {
    this.bootId = readBootId();
  }

  /**
   * `inner` (the direct launcher, or a sandbox's), recording the groups it starts for
   * `runId`; a launcher whose stages run elsewhere (a Slurm job: honoursResources) as it
   * is. A record that cannot be written is said to `onRecordError`; the stage runs on.
   */
  track(
    inner: StageLauncher,
    runId: string,
    onRecordError: (error: unknown, pid: number) => void = () => {},
  ): StageLauncher {
    if (inner.honoursResources || this.bootId === null) return inner;
    return new TrackedLauncher(
      inner,
      (pid, stage) => this.record(pid, runId, stage, onRecordError),
      (pid) => this.forget(pid),
    );
  }

  /**
   * Kills every recorded group still running (what started it must be dead: the caller
   * holds its lock), waits for each to disappear (bounded), and removes every record and
   * then the directory. Returns what it ended, and the records it could not read.
   */
  async killLeftovers(): Promise<{ ended: LeftoverGroup[]; unreadable: string[] }> {
    const ended: LeftoverGroup[] = [];
    const unreadable: string[] = [];
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names.sort()) {
      const file = path.join(this.dir, name);
      const group = await readRecord(file);
      if (group === null) {
        unreadable.push(name);
      } else if (this.isRunning(group)) {
        signalGroup(group.pid, 'SIGKILL');
        ended.push({
          runId: group.runId,
          stage: group.stage,
          pid: group.pid,
          gone: await groupGone(group.pid, GONE_WAIT_MS),
        });
      }
      await rm(file, { force: true });
    }
    await this.close();
    return { ended, unreadable };
  }

  /** Removes the directory once it holds no record (every group recorded is gone). */
  async close(): Promise<void> {
    await rmdir(this.dir).catch(() => undefined);
  }

  /** Whether the group recorded is still running, and still the one recorded. */
  private isRunning(group: StageGroup): boolean {
    if (group.bootId !== this.bootId) return false;
    const ticks = startTicksOf(group.pid);
    // The leader lives on as another process: the group recorded ended long ago.
    if (ticks !== null && ticks !== group.startTicks) return false;
    // The leader is gone but the group may not be: its id is not given to another process
    // while any process of the group is left.
    return groupExists(group.pid);
  }

  private record(
    pid: number,
    runId: string,
    stage: string | null,
    onRecordError: (error: unknown, pid: number) => void,
  ): void {
    const startTicks = startTicksOf(pid);
    if (startTicks === null || this.bootId === null) return;
    const group: StageGroup = { pid, startTicks, bootId: this.bootId, runId, stage };
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(this.fileOf(pid), `${JSON.stringify(group)}\n`, { mode: 0o600 });
    } catch (error) {
      // The stage runs on: what is lost is only the clean-up after a kill -9.
      onRecordError(error, pid);
    }
  }

  private forget(pid: number): void {
    rmSync(this.fileOf(pid), { force: true });
  }

  private fileOf(pid: number): string {
    return path.join(this.dir, `${pid}.json`);
  }
}

/** A launcher that says which groups it starts, and everything else as `inner` does. */
class TrackedLauncher implements StageLauncher {
  readonly honoursResources = false;
  private launching: string | null = null;

  constructor(
    private readonly inner: StageLauncher,
    private readonly onStarted: (pid: number, stage: string | null) => void,
    private readonly onGone: (pid: number) => void,
  ) {}

  launch(cmd: string, cwd: string, writable?: readonly string[], stage?: LaunchedStage) {
    // runStageProcess spawns right after launch, in the same turn: `started` is this launch's.
    this.launching = stage?.name ?? null;
    return this.inner.launch(cmd, cwd, writable, stage);
  }

  explainExit(end: JobEnd): string | null {
    return this.inner.explainExit?.(end) ?? null;
  }

  givesBack(end: JobEnd): boolean {
    return this.inner.givesBack?.(end) ?? false;
  }

  reattaches(stage: LaunchedStage): boolean {
    return this.inner.reattaches?.(stage) ?? false;
  }

  usage(stage: LaunchedStage, signal?: AbortSignal): Promise<StageUsage | null> {
    return this.inner.usage?.(stage, signal) ?? Promise.resolve(null);
  }

  ended(): void {
    this.inner.ended?.();
  }

  signal(pid: number, signal: NodeJS.Signals): void {
    this.inner.signal(pid, signal);
  }

  started(pid: number): void {
    this.inner.started?.(pid);
    this.onStarted(pid, this.launching);
  }

  gone(pid: number): void {
    this.inner.gone?.(pid);
    try {
      this.onGone(pid);
    } catch {
      // A record left behind is read at the next start and found ended: nothing is killed.
    }
  }
}

function readBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or null. */
function startTicksOf(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // After the command's name, which may hold spaces and parentheses: field 3 onwards.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

async function readRecord(file: string): Promise<StageGroup | null> {
  try {
    const parsed = StageGroup.safeParse(JSON.parse(await readFile(file, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

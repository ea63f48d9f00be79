import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { LineSplitter } from '../output/line-splitter.js';
import { parseJobStatusLine, type JobStatus } from './job-status-line.js';
import { directLauncher, groupGone, type LaunchedStage, type StageLauncher } from './stage-launcher.js';

export interface StageProcessOptions {
  /** A shell command line, run by `/bin/sh -c`. */
  cmd: string;
  /** The directory it runs in; absolute. */
  cwd: string;
  /** Its whole environment (see `stageEnvironment`); nothing is inherited. */
  env: Readonly<Record<string, string>>;
  /** How long it may run before it is stopped as timed out; null for no limit. */
  timeoutMs: number | null;
  /** Aborting stops it as cancelled; already aborted, it never starts. */
  signal?: AbortSignal;
  /**
   * How long each signal of the stop sequence (SIGINT, then SIGTERM, then SIGKILL) is
   * given before the next; also how long the output pipes may stay open after the
   * command exited.
   * @defaultValue 5000
   */
  killGraceMs?: number;
  /**
   * Starts and stops the command: directly, or in a sandbox (bubblewrap-launcher.ts).
   * @defaultValue directLauncher
   */
  launcher?: StageLauncher;
  /** Directories of this stage a sandboxing launcher must leave writable (see StageLauncher). */
  writable?: readonly string[];
  /** The stage being launched, for a launcher that submits it as a job (slurm-launcher.ts). */
  stage?: LaunchedStage;
  /**
   * Each complete line of output, as it arrives; a line past the LineSplitter's limit
   * comes in pieces, all but the last with `continues` true. Must not throw.
   */
  onLine(stream: 'stdout' | 'stderr', line: string, continues: boolean): void;
  /**
   * What its batch job does, as a launch that reports it says (StageLaunch.reportsJobStatus),
   * line by line in order. Must not throw.
   */
  onJobStatus?(status: JobStatus): void;
}

export interface StageProcessResult {
  /** The shell's exit code; null when a signal ended it (or it never started). */
  exitCode: number | null;
  /** The signal that ended the shell (`SIGINT`, `SIGKILL`…), or null. */
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** From the start until the command and its output were done. */
  durationMs: number;
  /** The shell's pid, which is also its process group's id; null when it never started. */
  pid: number | null;
}

/**
 * Runs a stage's command and resolves when it is over — the command, everything it
 * started, and its output. The command runs as `/bin/sh -c cmd` in a process group of
 * its own, with stdin closed; its stdout and stderr arrive through `onLine` as complete
 * lines. A timeout or an abort stops the whole group gently first (DESIGN §6): SIGINT
 * (Python raises KeyboardInterrupt and can save what it has), SIGTERM after
 * `killGraceMs`, SIGKILL after another. When the shell exits, whatever is left of its
 * group is killed, so a background process holding the pipes open cannot hang the
 * run, and the promise resolves once the group is gone and the output has been read.
 * It rejects only when the command cannot be started at all, naming the directory and
 * the command. A sandboxing `launcher` wraps the shell (its signals then reach the
 * processes inside, and its end takes every one of them with it, `setsid` ones too).
 */
export function runStageProcess(options: StageProcessOptions): Promise<StageProcessResult> {
  const killGraceMs = options.killGraceMs ?? 5000;
  if (options.signal?.aborted) {
    return Promise.resolve({
      exitCode: null,
      signal: null,
      timedOut: false,
      cancelled: true,
      durationMs: 0,
      pid: null,
    });
  }
  const started = performance.now();
  const launcher = options.launcher ?? directLauncher;
  return new Promise((resolve, reject) => {
    const launch = launcher.launch(options.cmd, options.cwd, options.writable ?? [], options.stage);
    const child = spawn(launch.file, launch.args, {
      cwd: options.cwd,
      env: options.env,
      // A group of its own: signals reach everything the command starts, and nothing of the engine.
      detached: true,
      // Descriptor 3 only for a program that reports on it: a stage's command must not inherit it.
      stdio: ['ignore', 'pipe', 'pipe', launch.reportsJobStatus ? 'pipe' : 'ignore'],
      ...launch.user,
    });
    const pid = child.pid ?? null;
    if (pid !== null) launcher.started?.(pid);
    const stdout = new LineSplitter((line, continues) => options.onLine('stdout', line, continues));
    const stderr = new LineSplitter((line, continues) => options.onLine('stderr', line, continues));
    // Both are pipes (stdio above); the type of a four-descriptor spawn does not say so.
    const [, outPipe, errPipe, statusPipe] = child.stdio;
    outPipe?.on('data', (chunk: Buffer) => stdout.push(chunk));
    errPipe?.on('data', (chunk: Buffer) => stderr.push(chunk));
    // A status line is a few words: a piece of a longer one is no status.
    const statuses = new LineSplitter(
      (line, continues) => {
        const status = continues ? null : parseJobStatusLine(line);
        if (status) options.onJobStatus?.(status);
      },
      { maxLineBytes: 4096 },
    );
    statusPipe?.on('data', (chunk: Buffer) => statuses.push(chunk));

    let timedOut = false;
    let cancelled = false;
    let exit: { code: number | null; signal: string | null } | null = null;
    const timers: NodeJS.Timeout[] = [];
    const stopGroup = () => {
      if (timedOut || cancelled || exit !== null || pid === null) return false;
      launcher.signal(pid, 'SIGINT');
      timers.push(setTimeout(() => launcher.signal(pid, 'SIGTERM'), killGraceMs));
      timers.push(setTimeout(() => launcher.signal(pid, 'SIGKILL'), 2 * killGraceMs));
      return true;
    };
    const onAbort = () => {
      if (stopGroup()) cancelled = true;
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.timeoutMs !== null) {
      timers.push(
        setTimeout(() => {
          if (stopGroup()) timedOut = true;
        }, options.timeoutMs),
      );
    }
    const cleanUp = () => {
      for (const timer of timers) clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    };

    let failed = false;
    child.on('error', (error: NodeJS.ErrnoException) => {
      failed = true;
      cleanUp();
      void startFailure(options, error).then(reject);
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (pid !== null) launcher.signal(pid, 'SIGKILL');
      // A process that left the group (setsid) can keep the pipes open forever.
      timers.push(
        setTimeout(() => {
          outPipe?.destroy();
          errPipe?.destroy();
          statusPipe?.destroy();
        }, killGraceMs),
      );
    });
    child.on('close', () => {
      // A command that never started closes too, after its 'error'.
      if (failed || pid === null) return;
      cleanUp();
      stdout.end();
      stderr.end();
      statuses.end();
      const durationMs = Math.round(performance.now() - started);
      void groupGone(pid, GROUP_EXIT_WAIT_MS).then(() => {
        launcher.gone?.(pid);
        resolve({
          exitCode: exit?.code ?? null,
          signal: exit?.signal ?? null,
          timedOut,
          cancelled,
          durationMs,
          pid,
        });
      });
    });
  });
}

/**
 * How long to wait for a killed group to disappear. Killed orphans stay in the process
 * table until init reaps them — at once under systemd or tini, every ~2 s under some
 * container inits, never under one that does not reap — so the wait is bounded.
 */
const GROUP_EXIT_WAIT_MS = 5000;

/** The error a command that cannot start rejects with: what, where, and why. */
async function startFailure(options: StageProcessOptions, error: NodeJS.ErrnoException): Promise<Error> {
  // spawn reports a missing cwd as `spawn /bin/sh ENOENT`, which points at the wrong thing.
  const why =
    error.code === 'ENOENT' && !(await isDirectory(options.cwd))
      ? `the directory ${options.cwd} does not exist`
      : error.message;
  return new Error(`Could not start the stage command "${options.cmd}" in ${options.cwd}: ${why}`, {
    cause: error,
  });
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

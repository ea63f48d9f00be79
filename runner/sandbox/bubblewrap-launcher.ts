import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { totalmem } from 'node:os';
import path from 'node:path';
import { descendantPids } from './descendant-pids.js';
import { signalGroup, type StageLaunch, type StageLauncher } from './stage-launcher.js';

export interface BubblewrapLauncherOptions {
  /** The `bwrap` executable (absolute). */
  bwrap: string;
  /** Bound read-write at their own paths: the run's checkout. */
  writable: readonly string[];
  /** Bound read-only at their own paths, over what is hidden: the objects a checkout borrows. */
  readOnly: readonly string[];
  /**
   * Replaced by an empty directory (a directory) or an empty file (a file) before the
   * binds above: the runner's token file, its `--env-file`, its work directory and home.
   * A path that does not exist is skipped.
   */
  hidden: readonly string[];
}

/**
 * Runs each stage inside bubblewrap (Debian's `bubblewrap`): a user and a PID namespace
 * of its own (`/proc` shows only the stage's processes, so no other process's
 * environment, the runner's token among them, can be read), a new session (no terminal
 * to inject keys into), the system read-only, a private `/tmp`, `/var/tmp` and
 * `/dev/shm` of bounded size, an empty read-only `/run` (no daemon's socket), a minimal `/dev` plus the NVIDIA
 * devices when the machine has them, the `hidden` paths masked, and only the run's
 * checkout writable. The network is shared: stages download data sets. Nested user namespaces
 * are refused, so the stage cannot build a namespace in which it could unmount a mask.
 *
 * The sandbox ends with the stage's shell: bwrap's PID 1 exits with it and the kernel
 * kills whatever else the stage started, `setsid` daemons included (a process group
 * alone cannot catch those); `--die-with-parent` takes it down if the engine dies.
 */
export class BubblewrapLauncher implements StageLauncher {
  private readonly devices: string[];

  constructor(private readonly options: BubblewrapLauncherOptions) {
    this.devices = nvidiaDevices();
  }

  launch(cmd: string, cwd: string, writable: readonly string[] = []): StageLaunch {
    const { options } = this;
    const args = [
      '--unshare-user',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--disable-userns',
      '--die-with-parent',
      '--new-session',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      // A tmpfs is memory no process is charged for: unbounded, a stage filling it would
      // have the kernel kill other processes (the runner among them), not the stage.
      ...['/tmp', '/var/tmp', '/dev/shm'].flatMap((dir) => [
        '--size',
        String(SCRATCH_BYTES[dir]),
        '--tmpfs',
        dir,
      ]),
      // Daemons' sockets live here (Docker's, the database's, D-Bus): connecting needs no
      // write access to the file system, and a root runner's stage would pass their
      // permission checks. Only the DNS resolver's files are given back.
      '--tmpfs',
      '/run',
      ...(existsSync(RESOLVER_DIR) ? ['--ro-bind', RESOLVER_DIR, RESOLVER_DIR] : []),
    ];
    for (const device of this.devices) args.push('--dev-bind', device, device);
    // A masked home stays writable (tools write caches to ~/.cache), within a bound.
    for (const hidden of outermost(options.hidden)) {
      const kind = kindOf(hidden);
      if (kind === 'directory') args.push('--size', String(MASK_BYTES), '--tmpfs', hidden);
      else if (kind === 'file') args.push('--ro-bind', '/dev/null', hidden);
    }
    for (const dir of options.readOnly) args.push('--ro-bind', dir, dir);
    for (const dir of [...options.writable, ...writable]) args.push('--bind', dir, dir);
    // Made read-only once the resolver's bind has its mount point: no place to write.
    args.push('--remount-ro', '/run');
    args.push('--chdir', cwd, '--', '/bin/sh', '-c', cmd);
    return { file: options.bwrap, args };
  }

  /**
   * bwrap forwards no signal to the sandbox, and a signal that kills it kills the stage
   * at once: so SIGINT and SIGTERM go to each process below bwrap's own two (itself
   * and its PID 1, both named `bwrap`), giving Python its KeyboardInterrupt; SIGKILL
   * goes to bwrap, which takes the whole sandbox with it.
   */
  signal(pid: number, signal: NodeJS.Signals): void {
    if (signal === 'SIGKILL') return signalGroup(pid, signal);
    for (const child of descendantPids(pid)) {
      if (commandName(child) === 'bwrap') continue;
      try {
        process.kill(child, signal);
      } catch {
        // Gone since the scan.
      }
    }
  }
}

/**
 * The most each private scratch directory may hold: a quarter of the machine's memory
 * for `/tmp`, an eighth for `/var/tmp` and for `/dev/shm` (PyTorch's data loaders share
 * tensors there), half of it in all.
 */
const SCRATCH_BYTES: Readonly<Record<string, number>> = {
  '/tmp': partOfMemory(4),
  '/var/tmp': partOfMemory(8),
  '/dev/shm': partOfMemory(8),
};

/** The most a masked directory (the runner's home, its work directory) may hold in the sandbox. */
const MASK_BYTES = partOfMemory(16);

/** Where `/etc/resolv.conf` points on systemd-resolved machines. */
const RESOLVER_DIR = '/run/systemd/resolve';

/**
 * The paths of the list, real (a mask goes where a symlink leads), not inside another one
 * of it (masking that hides them too), and never `/` itself.
 */
function outermost(paths: readonly string[]): string[] {
  const real = paths.map((each) => {
    try {
      return realpathSync(each);
    } catch {
      return path.resolve(each);
    }
  });
  const sorted = [...new Set(real)].filter((each) => each !== '/').sort((a, b) => a.length - b.length);
  const kept: string[] = [];
  for (const candidate of sorted) {
    if (!kept.some((outer) => candidate === outer || candidate.startsWith(`${outer}/`))) kept.push(candidate);
  }
  return kept;
}

/** A `divisor`th of the machine's memory, in whole MiB: the kernel rounds a tmpfs's size up to pages. */
function partOfMemory(divisor: number): number {
  const mib = 1024 * 1024;
  return Math.floor(totalmem() / divisor / mib) * mib;
}

function kindOf(file: string): 'directory' | 'file' | null {
  try {
    return statSync(file).isDirectory() ? 'directory' : 'file';
  } catch {
    return null;
  }
}

function nvidiaDevices(): string[] {
  try {
    return readdirSync('/dev')
      .filter((name) => name.startsWith('nvidia'))
      .map((name) => `/dev/${name}`);
  } catch {
    return [];
  }
}

function commandName(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

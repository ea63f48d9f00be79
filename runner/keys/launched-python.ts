import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { quote } from 'shell-quote';
import { directLauncher, type StageLauncher } from '../sandbox/stage-launcher.js';

const run = promisify(execFile);

/** A launcher that takes longer than this to start Python is broken, not slow. */
const PROBE_TIMEOUT_MS = 60_000;
/** Marks the probe's answer among whatever else a launcher prints. */
const MARKER = 'fluksio-launched-python';
/**
 * Run with `-S -c`: `sys` is built in, so nothing is imported from the folder it runs in
 * (`-c` puts that folder first on the import path, and without `site` a Python before
 * 3.11 would import a repository's own `os.py` from there). The real path is found here.
 */
const PROBE = `import sys; print("${MARKER}\\t" + sys.executable)`;

/** The interpreter a Python launcher starts: as Python names itself, and its real file. */
export interface LaunchedPython {
  /** `sys.executable`: a virtual environment's own path, though it links to its base interpreter. */
  executable: string;
  /** That file with every symlink followed, whose bytes are keyed. */
  realPath: string;
}

/**
 * Asks the Python launcher at `program` (an absolute path), started in the folder `cwd`
 * (absolute), which interpreter it starts; null when it cannot say.
 */
export type LauncherProbe = (program: string, cwd: string) => Promise<LaunchedPython | null>;

/**
 * A probe of Python launchers for one run: a `python3` that is a script choosing the
 * interpreter when it runs (pyenv's, asdf's or mise's shim reads `.python-version`, or
 * a global file outside the repository) is started once with `-c`, as a stage would
 * start it — in the folder the stage starts it in (a shim reads `.python-version` from
 * there upward), with the stages' environment, through the stages' launcher (a sandbox
 * holds it as it holds them) — and says which interpreter it is. The answer for each
 * launcher and folder is kept for the rest of the run, as the fingerprint's output is. Any
 * folder a stage's `cd` names is as safe as the stage there: only a launcher outside the
 * repository is ever asked, never the repository's code (PROBE imports nothing). A folder
 * that does not exist yet is asked about in the nearest one above it that does.
 */
export function makeLauncherProbe(options: {
  /** The stages' environment (an empty home and temp folder of its own). */
  environment: () => Promise<Record<string, string>>;
  launcher?: StageLauncher;
  /** Stops a probe still running (SIGTERM): what it would have answered is then null. @defaultValue none */
  signal?: AbortSignal;
}): LauncherProbe {
  const asked = new Map<string, Promise<LaunchedPython | null>>();
  return async (program, cwd) => {
    // A folder the stage makes as it runs (`mkdir -p build && cd build && python3 …`) is
    // empty when made: the launcher reads there what it reads in the nearest folder that
    // exists, where it is asked. Asked again once the folder exists (a stage made it).
    const folder = await nearestFolder(cwd);
    // A NUL is in neither a path nor a folder: the pair cannot be read as another.
    const pair = `${folder}\0${program}`;
    let answer = asked.get(pair);
    if (!answer) {
      answer = askLauncher(program, folder, options);
      asked.set(pair, answer);
    }
    return answer;
  };
}

/** `dir`, or the nearest folder above it that exists. */
async function nearestFolder(dir: string): Promise<string> {
  for (let here = dir; ; here = path.dirname(here)) {
    if ((await stat(here).catch(() => null))?.isDirectory() || here === path.dirname(here)) return here;
  }
}

async function askLauncher(
  program: string,
  cwd: string,
  options: Parameters<typeof makeLauncherProbe>[0],
): Promise<LaunchedPython | null> {
  const launcher = options.launcher ?? directLauncher;
  try {
    // `-S`: without `site`, which names no interpreter and is two thirds of Python's start.
    const launch = launcher.launch(quote([program, '-S', '-c', PROBE]), cwd);
    const { stdout } = await run(launch.file, launch.args, {
      cwd,
      env: await options.environment(),
      timeout: PROBE_TIMEOUT_MS,
      maxBuffer: 1024 * 1024,
      ...(options.signal ? { signal: options.signal } : {}),
      ...launch.user,
    });
    const line = stdout.split('\n').find((each) => each.startsWith(`${MARKER}\t`));
    const executable = line?.slice(MARKER.length + 1);
    return executable ? { executable, realPath: await realpath(executable) } : null;
  } catch {
    // A launcher that cannot start Python now keys as such; the stage will say why it fails.
    return null;
  } finally {
    launcher.ended?.();
  }
}

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { quote } from 'shell-quote';
import { directLauncher, type StageLauncher } from '../sandbox/stage-launcher.js';

const run = promisify(execFile);

/** A launcher that takes longer than this to start Python is broken, not slow. */
const PROBE_TIMEOUT_MS = 60_000;
/** Marks the probe's answer among whatever else a launcher prints. */
const MARKER = 'fluksio-launched-python';
const PROBE = `import os, sys; print("${MARKER}\\t" + sys.executable + "\\t" + os.path.realpath(sys.executable))`;

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
 * repository is ever asked, never the repository's code; in a folder that does not exist
 * the answer is null (and the stage fails there the same way).
 */
export function makeLauncherProbe(options: {
  /** The stages' environment (an empty home and temp folder of its own). */
  environment: () => Promise<Record<string, string>>;
  launcher?: StageLauncher;
  /** Stops a probe still running (SIGTERM): what it would have answered is then null. @defaultValue none */
  signal?: AbortSignal;
}): LauncherProbe {
  const asked = new Map<string, Promise<LaunchedPython | null>>();
  return (program, cwd) => {
    // A NUL is in neither a path nor a folder: the pair cannot be read as another.
    const pair = `${cwd}\0${program}`;
    let answer = asked.get(pair);
    if (!answer) {
      answer = askLauncher(program, cwd, options);
      asked.set(pair, answer);
    }
    return answer;
  };
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
    const [, executable, realPath] = line?.split('\t') ?? [];
    return executable && realPath ? { executable, realPath } : null;
  } catch {
    // A launcher that cannot start Python now keys as such; the stage will say why it fails.
    return null;
  } finally {
    launcher.ended?.();
  }
}

import { join } from 'node:path';

/**
 * Variables a stage inherits from the engine's environment as they are: their values
 * enter its cache key (see `keyedEnvironment`). `PATH` decides which programs run, and
 * the programs it leads to are keyed as well (`commandInterpreters`).
 */
export const INHERITED = ['PATH'] as const;

/**
 * Variables every stage gets with the same value on every machine, so that a result made
 * under one locale, time zone or terminal is never restored under another. A pipeline
 * that needs the real value lists the variable in `env`: it is then passed and keyed.
 */
const FIXED: Readonly<Record<string, string>> = {
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TZ: 'UTC',
  TERM: 'dumb',
  SHELL: '/bin/sh',
};

export interface StageEnvironmentOptions {
  /** The environment the engine itself runs in (`process.env` at the edge). */
  source: Readonly<Record<string, string | undefined>>;
  /** Names a pipeline's `env` list passes through; unset in `source`, they stay unset. */
  pass: readonly string[];
  /** Set on top, e.g. the runner's secrets, `FLUKSIO_RUN_ID`, `FLUKSIO_STAGE`. */
  extra: Readonly<Record<string, string>>;
  /**
   * An empty directory of the stage's own (see `makePrivateDir`): its `home`, `tmp` and
   * `pycache` become `HOME`, `TMPDIR` and `PYTHONPYCACHEPREFIX`.
   */
  privateDir: string;
}

/**
 * The environment a stage's command gets. Every variable in it is either keyed or fixed,
 * so that nothing a key does not cover reaches the stage (issue 8, defect 5), and it is
 * built from an allow-list so that nothing else of the engine's environment — a runner
 * token, cloud credentials — reaches code from a repository (DESIGN §6):
 * - keyed: `PATH` and the variables the pipeline's `env` passes;
 * - fixed: `LANG`/`LC_ALL` `C.UTF-8`, `TZ` `UTC`, `TERM` `dumb`, `SHELL` `/bin/sh`, and
 *   `HOME` and `TMPDIR` in the stage's private directory (a pipeline may pass the real
 *   ones through `env`, keyed); `USER`, `LOGNAME`, `LANGUAGE`, other `LC_*` are not passed;
 * - `PYTHONPYCACHEPREFIX` in the private directory, always: Python then neither reads
 *   nor writes `__pycache__` beside the sources, so a stage never loads bytecode compiled
 *   from another version of a file (Python trusts a `.pyc` whose recorded mtime and size
 *   match, which a same-size edit with its mtime put back defeats);
 * - `PYTHONUNBUFFERED=1`, so that Python writes each line through the pipe as it prints
 *   it — metrics and logs stream live, and nothing is lost when the stage is killed;
 * - `extra` (the run id, the stage's name, the runner's secrets): not keyed — they name
 *   the run or grant access, they are not inputs.
 * A pipeline cannot pass `FLUKSIO_*` variables: those are the engine's own (its tokens
 * among them) and reach a stage only through `extra`.
 */
export function stageEnvironment(options: StageEnvironmentOptions): Record<string, string> {
  const env: Record<string, string> = {
    ...FIXED,
    HOME: join(options.privateDir, 'home'),
    TMPDIR: join(options.privateDir, 'tmp'),
  };
  for (const [name, value] of Object.entries(keyedEnvironment(options.source, options.pass))) {
    if (value !== null) env[name] = value;
  }
  Object.assign(env, options.extra);
  env.PYTHONPYCACHEPREFIX = join(options.privateDir, 'pycache');
  env.PYTHONUNBUFFERED = '1';
  return env;
}

/**
 * The keyed part of a stage's environment, as it enters the cache key: `PATH` and each
 * variable the pipeline passes (`FLUKSIO_*` never), null for one that is unset.
 */
export function keyedEnvironment(
  source: Readonly<Record<string, string | undefined>>,
  pass: readonly string[],
): Record<string, string | null> {
  const keyed: Record<string, string | null> = {};
  for (const name of [...INHERITED, ...pass]) {
    if (!name.startsWith('FLUKSIO_')) keyed[name] = source[name] ?? null;
  }
  return keyed;
}

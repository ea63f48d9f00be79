/** What every program expects to find: where to look for binaries, who and where it is, the locale. */
const BASICS = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TERM'];

export interface StageEnvironmentOptions {
  /** The environment the engine itself runs in (`process.env` at the edge). */
  source: Readonly<Record<string, string | undefined>>;
  /** Names a pipeline's `env` list passes through; unset in `source`, they stay unset. */
  pass: readonly string[];
  /** Set on top, e.g. the runner's secrets, `FLUKSIO_RUN_ID`, `FLUKSIO_STAGE`. */
  extra: Readonly<Record<string, string>>;
}

/**
 * The environment a stage's command gets, built from an allow-list so that nothing
 * else of the engine's environment — a runner token, cloud credentials — reaches code
 * from a repository (DESIGN §6): the basics (`PATH`, `HOME`, `USER`, `LOGNAME`,
 * `SHELL`, `LANG`, `LANGUAGE`, `LC_*`, `TZ`, `TMPDIR`, `TERM`), then the variables the
 * pipeline passes, then `extra`, and always `PYTHONUNBUFFERED=1` so that Python writes
 * each line through the pipe as it prints it instead of in 8 KiB blocks — metrics and
 * logs stream live, and nothing is lost when the stage is killed. A pipeline cannot
 * pass `FLUKSIO_*` variables: those are the engine's own (its tokens among them) and
 * reach a stage only through `extra`.
 */
export function stageEnvironment(options: StageEnvironmentOptions): Record<string, string> {
  const env: Record<string, string> = {};
  const copy = (name: string) => {
    const value = options.source[name];
    if (value !== undefined) env[name] = value;
  };
  for (const name of BASICS) copy(name);
  for (const name of Object.keys(options.source)) if (name.startsWith('LC_')) copy(name);
  for (const name of options.pass) if (!name.startsWith('FLUKSIO_')) copy(name);
  Object.assign(env, options.extra);
  env.PYTHONUNBUFFERED = '1';
  return env;
}

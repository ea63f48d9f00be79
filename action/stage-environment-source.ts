/** Variables of the job that are the runner's or the action's own, never a stage's. */
const WITHHELD =
  /^(?:INPUT_|STATE_|ACTIONS_)|^(?:GITHUB_TOKEN|GH_TOKEN|GITHUB_OUTPUT|GITHUB_STATE|GITHUB_ENV|GITHUB_PATH|GITHUB_STEP_SUMMARY)$/;

/**
 * The job's environment as the engine may see it: without the action's inputs
 * (`INPUT_*`, the tokens among them), the runner's credentials (`ACTIONS_*`, the
 * workflow token) and its file commands (a stage writing to `$GITHUB_OUTPUT` would set
 * the step's outputs), and without any variable holding one of `secrets`. The engine
 * then passes stages only the basics and the variables the pipeline's `env` lists
 * (DESIGN §6), so even a pipeline that lists one of these never gets it. That keeps them
 * out of a stage's environment, not out of its reach: stages run as the job's user, so
 * like any step they could read the action process's `/proc/<pid>/environ`, or the
 * credentials actions/checkout persisted in `.git/config` (README, GitHub Actions).
 */
export function stageEnvironmentSource(
  env: Readonly<Record<string, string | undefined>>,
  secrets: readonly string[],
): Record<string, string | undefined> {
  const held = new Set(secrets.filter((secret) => secret !== ''));
  return Object.fromEntries(
    Object.entries(env).filter(
      ([name, value]) => !WITHHELD.test(name.toUpperCase()) && (value === undefined || !held.has(value)),
    ),
  );
}

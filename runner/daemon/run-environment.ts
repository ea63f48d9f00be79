import { INHERITED } from '../sandbox/stage-environment.js';

/** What the engine is given for one claimed run: the environment its stages draw from, and the secrets. */
export interface RunEnvironment {
  /** The engine's `environment`: what the pipeline's `env` names and the basics are read from. */
  environment: Record<string, string>;
  /** The engine's `secrets`: set in every stage and masked in every log. */
  secrets: Record<string, string>;
}

/**
 * Chooses what a claimed run's stages may see (DESIGN §6). A trusted run reads the
 * pipeline's `env` variables from the runner's environment and gets the runner's
 * secrets. A fork's run gets neither — its pipeline is the fork author's, and must not
 * name a runner variable to read it — only `PATH`, which stages inherit (the rest of
 * their environment is fixed). `FLUKSIO_*` variables, the runner's own (its token among them), are
 * never passed, whatever the run.
 */
export function runEnvironment(options: {
  fork: boolean;
  runnerEnvironment: Readonly<Record<string, string | undefined>>;
  secrets: Readonly<Record<string, string>>;
}): RunEnvironment {
  const environment: Record<string, string> = {};
  if (options.fork) {
    // Only what stages inherit from any engine; everything else they get is fixed.
    for (const name of INHERITED) {
      const value = options.runnerEnvironment[name];
      if (value !== undefined) environment[name] = value;
    }
  } else {
    for (const [name, value] of Object.entries(options.runnerEnvironment)) {
      if (value !== undefined && !name.startsWith('FLUKSIO_')) environment[name] = value;
    }
  }
  return { environment, secrets: options.fork ? {} : { ...options.secrets } };
}

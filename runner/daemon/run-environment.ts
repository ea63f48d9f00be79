import { stageEnvironment } from '../stage-environment.js';

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
 * name a runner variable to read it — only the basics every program needs (PATH, HOME,
 * the locale…). `FLUKSIO_*` variables, the runner's own (its token among them), are
 * never passed, whatever the run.
 */
export function runEnvironment(options: {
  fork: boolean;
  runnerEnvironment: Readonly<Record<string, string | undefined>>;
  secrets: Readonly<Record<string, string>>;
}): RunEnvironment {
  const environment: Record<string, string> = {};
  if (options.fork) {
    // The engine's allow-list of basics, with nothing passed and nothing added.
    Object.assign(environment, stageEnvironment({ source: options.runnerEnvironment, pass: [], extra: {} }));
  } else {
    for (const [name, value] of Object.entries(options.runnerEnvironment)) {
      if (value !== undefined && !name.startsWith('FLUKSIO_')) environment[name] = value;
    }
  }
  return { environment, secrets: options.fork ? {} : { ...options.secrets } };
}

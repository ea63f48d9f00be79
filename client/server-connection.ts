import { redactUrl } from './redact-url.js';
import { UsageError } from '../present/terminal/usage-error.js';
import { ControlPlaneClient } from './control-plane-client.js';

/** Where the control plane is and the API token to use with it. */
export interface ServerConnection {
  url: string;
  token: string;
}

/**
 * The control plane's URL and API token: `--url` or `FLUKSIO_URL`, and `FLUKSIO_TOKEN`
 * (a token is never taken from a flag: flags show up in `ps` and shell history).
 */
export function serverConnection(
  urlOption: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): ServerConnection {
  const url = urlOption ?? env.FLUKSIO_URL;
  if (!url) throw new UsageError('No control plane: give --url URL or set FLUKSIO_URL');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url: "${redactUrl(url)}" is not a URL (e.g. https://fluksio.example.com)`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new UsageError(`--url: "${redactUrl(url)}" must be http:// or https://`);
  }
  const token = env.FLUKSIO_TOKEN;
  if (!token) throw new UsageError('No API token: set FLUKSIO_TOKEN (see `fluksio token add`)');
  return { url: parsed.origin + parsed.pathname.replace(/\/$/, ''), token };
}

/**
 * Retries of a submitter's request that failed transiently: a person (or a workflow
 * step) waits on it, so it gives up after a few seconds where a runner keeps trying.
 */
const SUBMITTER_RETRIES = 3;

/** The client `fluksio submit`/`show`/`cancel`/`pull` and the action's submit mode talk to the control plane with. */
export function submitterClient(connection: ServerConnection): ControlPlaneClient {
  return new ControlPlaneClient({ ...connection, retries: SUBMITTER_RETRIES });
}

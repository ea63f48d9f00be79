import { readFileSync } from 'node:fs';

/** How the control plane acts as a GitHub App. */
export interface GitHubAppSettings {
  /** The App's id (`APP_ID`). */
  appId: number;
  /** The App's private key, PEM (`PRIVATE_KEY`, or the file at `PRIVATE_KEY_PATH`). */
  privateKey: string;
  /** The secret webhook deliveries are signed with (`WEBHOOK_SECRET`). */
  webhookSecret: string;
  /**
   * GitHub's REST API (`GITHUB_API_URL`): GitHub Enterprise, or a test double.
   * @defaultValue 'https://api.github.com'
   */
  apiUrl: string;
  /**
   * The accounts (users, organisations) whose installations may run anything
   * (`FLUKSIO_ALLOWED_OWNERS`, comma-separated; required with `APP_ID`), lower case: a
   * public App can be installed by anyone, and nobody else's code runs on these runners.
   */
  allowedOwners: string[];
  /**
   * The allowed owners written `login:id` in `FLUKSIO_ALLOWED_OWNERS`, by lower-case login:
   * matched by GitHub's account id, not their name. A name is GitHub's to reassign: an
   * account renamed or deleted frees it for anyone to register and install the App under.
   */
  pinnedOwners: ReadonlyMap<string, number>;
  /**
   * The check runs' name (`FLUKSIO_CHECK_NAME`), stable so it can be a required check; a
   * sweep member's is `<name> (lr=0.1)`.
   * @defaultValue 'fluksio'
   */
  checkName: string;
  /**
   * The control plane's address as people reach it (`FLUKSIO_PUBLIC_URL`), for the links
   * in check runs.
   * @defaultValue `http://<HOST>:<PORT>` (`localhost` for 0.0.0.0)
   */
  publicUrl: string;
  /**
   * Sign-in with GitHub on the run pages, through the App's OAuth client
   * (`GITHUB_CLIENT_ID` and `GITHUB_CLIENT_SECRET`, from the App's settings page; its
   * callback URL is `<publicUrl>/auth/github/callback`); null keeps the pages to signed
   * links and API tokens.
   * @defaultValue null
   */
  signIn: { clientId: string; clientSecret: string } | null;
  /**
   * How long one request to GitHub may take, its answer included (`FLUKSIO_GITHUB_TIMEOUT`,
   * e.g. `30s`): one GitHub holds open fails, and the delivery or outbox job is retried.
   * @defaultValue 30_000
   */
  requestTimeoutMs: number;
}

/** One `FLUKSIO_ALLOWED_OWNERS` entry, parsed: `acme` or, pinned to its account id, `acme:1234567`. */
export interface AllowedOwner {
  /** The account's login, lower case. */
  login: string;
  /** GitHub's account id, when the entry pins the owner to it. */
  id?: number;
}

/** The environment variables the App is configured from, parsed (control-plane-settings.ts). */
export interface GitHubAppVariables {
  APP_ID?: number | undefined;
  PRIVATE_KEY?: string | undefined;
  PRIVATE_KEY_PATH?: string | undefined;
  WEBHOOK_SECRET?: string | undefined;
  GITHUB_API_URL: string;
  FLUKSIO_ALLOWED_OWNERS?: AllowedOwner[] | undefined;
  FLUKSIO_CHECK_NAME: string;
  FLUKSIO_PUBLIC_URL?: string | undefined;
  GITHUB_CLIENT_ID?: string | undefined;
  GITHUB_CLIENT_SECRET?: string | undefined;
  FLUKSIO_GITHUB_TIMEOUT: number;
  HOST: string;
  PORT: number;
}

/**
 * The GitHub App's settings when `APP_ID` is set, else null (or, when GitHub variables
 * are given without it, a problem: a half-configured App should not start silently
 * without GitHub). Problems are pushed onto `problems`, each naming its variable.
 */
export function readGitHubAppSettings(
  vars: GitHubAppVariables,
  problems: string[],
): GitHubAppSettings | null {
  if (vars.APP_ID === undefined) {
    const stray = (
      [
        'PRIVATE_KEY',
        'PRIVATE_KEY_PATH',
        'WEBHOOK_SECRET',
        'FLUKSIO_ALLOWED_OWNERS',
        'GITHUB_CLIENT_ID',
        'GITHUB_CLIENT_SECRET',
      ] as const
    ).filter((name) => vars[name] !== undefined);
    if (stray.length > 0) problems.push(`APP_ID: is required with ${stray.join(', ')} (the GitHub App's id)`);
    return null;
  }
  const before = problems.length;
  let privateKey = vars.PRIVATE_KEY;
  if (privateKey !== undefined && vars.PRIVATE_KEY_PATH !== undefined) {
    problems.push('PRIVATE_KEY_PATH: give either PRIVATE_KEY or PRIVATE_KEY_PATH, not both');
  } else if (vars.PRIVATE_KEY_PATH !== undefined) {
    try {
      privateKey = readFileSync(vars.PRIVATE_KEY_PATH, 'utf8');
    } catch (error) {
      problems.push(
        `PRIVATE_KEY_PATH: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  } else if (privateKey === undefined) {
    problems.push(
      "PRIVATE_KEY: is required with APP_ID (the App's private key, or PRIVATE_KEY_PATH naming its .pem file)",
    );
  }
  // A key passed through an environment that cannot hold newlines arrives with `\n`.
  privateKey = privateKey?.replace(/\\n/g, '\n');
  if (privateKey !== undefined && !/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(privateKey)) {
    problems.push(`${vars.PRIVATE_KEY_PATH ? 'PRIVATE_KEY_PATH' : 'PRIVATE_KEY'}: is not a PEM private key`);
  }
  if (vars.WEBHOOK_SECRET === undefined) {
    problems.push(
      'WEBHOOK_SECRET: is required with APP_ID (the secret GitHub signs webhook deliveries with)',
    );
  }
  if (vars.FLUKSIO_ALLOWED_OWNERS === undefined || vars.FLUKSIO_ALLOWED_OWNERS.length === 0) {
    problems.push(
      'FLUKSIO_ALLOWED_OWNERS: is required with APP_ID (the GitHub accounts whose installations may run, e.g. acme,octocat)',
    );
  }
  // Half a client cannot sign anyone in: say which half is missing rather than start without sign-in.
  if ((vars.GITHUB_CLIENT_ID === undefined) !== (vars.GITHUB_CLIENT_SECRET === undefined)) {
    const missing = vars.GITHUB_CLIENT_ID === undefined ? 'GITHUB_CLIENT_ID' : 'GITHUB_CLIENT_SECRET';
    problems.push(
      `${missing}: is required with ${missing === 'GITHUB_CLIENT_ID' ? 'GITHUB_CLIENT_SECRET' : 'GITHUB_CLIENT_ID'} (the App's OAuth client, for sign-in on the run pages)`,
    );
  }
  if (problems.length > before || privateKey === undefined) return null;
  return {
    appId: vars.APP_ID,
    privateKey,
    webhookSecret: vars.WEBHOOK_SECRET ?? '',
    apiUrl: vars.GITHUB_API_URL.replace(/\/+$/, ''),
    allowedOwners: (vars.FLUKSIO_ALLOWED_OWNERS ?? []).map((owner) => owner.login),
    pinnedOwners: new Map(
      (vars.FLUKSIO_ALLOWED_OWNERS ?? []).flatMap((owner) =>
        owner.id === undefined ? [] : [[owner.login, owner.id] as const],
      ),
    ),
    checkName: vars.FLUKSIO_CHECK_NAME,
    publicUrl: (
      vars.FLUKSIO_PUBLIC_URL ?? `http://${vars.HOST === '0.0.0.0' ? 'localhost' : vars.HOST}:${vars.PORT}`
    ).replace(/\/+$/, ''),
    signIn:
      vars.GITHUB_CLIENT_ID !== undefined && vars.GITHUB_CLIENT_SECRET !== undefined
        ? { clientId: vars.GITHUB_CLIENT_ID, clientSecret: vars.GITHUB_CLIENT_SECRET }
        : null,
    requestTimeoutMs: vars.FLUKSIO_GITHUB_TIMEOUT,
  };
}

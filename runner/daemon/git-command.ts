import { execFile } from 'node:child_process';
import { redactUrl } from '../../client/redact-url.js';

export interface GitCommandOptions {
  /** Where git runs (`-C`). */
  cwd: string;
  /**
   * The runner's environment. Only what git needs to find itself and the network is
   * taken from it: PATH, HOME, the locale, proxies and CA bundles. Nothing else —
   * no GIT_* of the machine, no runner token — reaches git.
   */
  environment: Readonly<Record<string, string | undefined>>;
  /** Also allow `file://` transports: only when the repository's own URL is `file://`. */
  allowFile: boolean;
  /**
   * An `http.extraHeader` (the claim's installation token) for this one command, scoped
   * to `url`. It travels only in the environment (`GIT_CONFIG_COUNT`/`_KEY_0`/`_VALUE_0`),
   * never in an argument, a URL or a config file, and is gone when the command ends.
   */
  extraHeader?: { url: string; value: string };
  /** Kills git when aborted. */
  signal?: AbortSignal;
}

/**
 * A git command that failed, in a sentence with git's own last lines (URLs redacted). A
 * plain Error: no caller branches on how git failed, each says what it was doing.
 */
function gitFailure(command: string, exitCode: number | string | null, stderr: string, cause: Error): Error {
  const last = stderr.trim().split('\n').slice(-3).join(' ').trim();
  return new Error(
    `git ${command} failed${exitCode === null ? '' : ` (exit ${exitCode})`}${last ? `: ${last}` : ''}`,
    { cause },
  );
}

/** What every program needs, plus how to reach the network through a proxy with the machine's CAs. */
const PASSED = [
  'PATH',
  'HOME',
  'TMPDIR',
  'TZ',
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'ALL_PROXY',
  'all_proxy',
  'NO_PROXY',
  'no_proxy',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'CURL_CA_BUNDLE',
  'GIT_SSL_CAINFO',
  'GIT_SSL_CAPATH',
];

/**
 * Runs git hardened as DESIGN §6 says, for code that fetches repositories someone else
 * controls. Every transport is refused but https (and file:// when allowed) —
 * `ext::sh -c …` URLs and `.gitmodules` entries never execute anything; neither system
 * nor global config is read; git never prompts. Every setting through which a
 * repository's own config could make git run a program is pinned on the command line,
 * which wins over any config file — a stage can write the checkout's `.git/config` (and,
 * unsandboxed, the mirror's), and the next git call must not run what it put there:
 * hooks, fsmonitor, `core.alternateRefsCommand`, credential helpers, askpass, pagers
 * and editors. Automatic gc is off, since checkouts borrow the
 * mirror's objects.
 *
 * child_process rather than simple-git: the environment must be exactly this one, with
 * GIT_CONFIG_* variables that simple-git drops unless told to allow them, and an abort
 * must kill the process. Callers put `--` before every URL.
 */
export async function runGit(args: readonly string[], options: GitCommandOptions): Promise<string> {
  const config = [
    'protocol.allow=never',
    'protocol.https.allow=always',
    ...(options.allowFile ? ['protocol.file.allow=always'] : []),
    'core.hooksPath=/dev/null',
    'core.fsmonitor=false',
    // Empty: a command that prints nothing, whatever the repository's config says.
    'core.alternateRefsCommand=',
    'core.alternateRefsPrefixes=',
    // An empty value resets the list of helpers read so far.
    'credential.helper=',
    'core.askPass=',
    'core.pager=cat',
    'core.editor=true',
    'http.sslVerify=true',
    'submodule.recurse=false',
    'gc.auto=0',
    'maintenance.auto=false',
    'advice.detachedHead=false',
  ].flatMap((entry) => ['-c', entry]);
  const env: Record<string, string> = {};
  for (const name of PASSED) {
    const value = options.environment[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, {
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
  });
  if (options.extraHeader) {
    Object.assign(env, {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: `http.${options.extraHeader.url}.extraHeader`,
      GIT_CONFIG_VALUE_0: options.extraHeader.value,
    });
  }
  const command = args.find((arg) => !arg.startsWith('-')) ?? 'command';
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...config, ...args],
      {
        cwd: options.cwd,
        env,
        maxBuffer: 256 << 20,
        ...(options.signal ? { signal: options.signal } : {}),
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        if (error.name === 'AbortError') return reject(options.signal?.reason ?? error);
        const code = (error as { code?: number | string | null }).code ?? null;
        reject(gitFailure(command, code, redactUrl(stderr), error));
      },
    );
  });
}

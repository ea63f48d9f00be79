import { RepositoryName } from '../schemas/protocol/repository-name.js';

/** Which clone URLs a control plane accepts (DESIGN §6). */
export interface CloneUrlPolicy {
  /** Hosts (`host` or `host:port`, lower case) an `https://` URL may name. */
  cloneHosts: readonly string[];
  /** Whether `file://` URLs are accepted (local repositories: one machine, tests). */
  allowFileUrls: boolean;
}

/** An accepted clone URL, normalized, and the repository it names. */
export interface AcceptedCloneUrl {
  cloneUrl: string;
  repository: string;
}

/**
 * Checks a submitted `cloneUrl` against the policy: `https://` on an allowed host, or
 * `file://` when allowed; never git's `<transport>::<address>` remote helpers (`ext::` runs
 * a command), other schemes, credentials in the URL, or text git could read as an option.
 * The repository it names is `owner/name` on github.com, else the host and the path
 * without `.git`, or for `file://` `local/` and the path as it is (a directory's name). Returns a sentence about `cloneUrl` when refused;
 * the URL itself is not echoed, since it may carry a secret.
 */
export function checkCloneUrl(text: string, policy: CloneUrlPolicy): AcceptedCloneUrl | { problem: string } {
  if (text.startsWith('-')) {
    return { problem: 'cloneUrl must not start with "-": git would read it as an option' };
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(text)) {
    return {
      problem: `cloneUrl uses git's "${text.split('::')[0]}::" remote-helper syntax, which is refused; expected an https:// URL`,
    };
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\s\u0000-\u001f\u007f]/.test(text)) {
    return { problem: 'cloneUrl must not contain spaces or control characters' };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: 'cloneUrl is not a URL; expected https://<host>/<owner>/<name>' };
  }
  if (url.username !== '' || url.password !== '') {
    return {
      problem:
        'cloneUrl must not carry credentials; the control plane hands runners their git credentials itself',
    };
  }
  if (url.search !== '' || url.hash !== '') {
    return { problem: 'cloneUrl must not have a query or a fragment' };
  }
  const path = url.pathname.replace(/^\/+/, '').replace(/\/+$/, '');
  if (url.protocol === 'https:') {
    const host = url.host.toLowerCase();
    if (!policy.cloneHosts.includes(host)) {
      return {
        problem: `cloneUrl names host "${host}", which is not on this control plane's allow-list (${policy.cloneHosts.join(', ') || 'empty'}; FLUKSIO_CLONE_HOSTS)`,
      };
    }
    if (host === 'github.com') {
      if (path.split('/').length !== 2) {
        return { problem: 'cloneUrl on github.com must be https://github.com/<owner>/<name>' };
      }
      return named(url.href, withoutGitSuffix(path));
    }
    // A colon cannot appear in a repository name; a port becomes part of the owner instead.
    return named(url.href, `${host.replace(':', '_')}/${withoutGitSuffix(path)}`);
  }
  if (url.protocol === 'file:') {
    if (!policy.allowFileUrls) {
      return {
        problem:
          'cloneUrl is a file:// URL, which this control plane does not allow (FLUKSIO_ALLOW_FILE_URLS)',
      };
    }
    if (url.host !== '') return { problem: 'cloneUrl must be a file:// URL of this machine (file:///path)' };
    return named(url.href, `local/${path}`);
  }
  return {
    problem: `cloneUrl uses the scheme "${url.protocol.replace(/:$/, '')}"; expected https://${policy.allowFileUrls ? ' or file://' : ''}`,
  };
}

/** What the clone URL of every repository on github.com starts with, as checkCloneUrl leaves it. */
export const GITHUB_CLONE_URL_PREFIX = 'https://github.com/';

/** The clone URL of a GitHub repository, for a submit that names none. */
export function githubCloneUrl(repository: string): string {
  return `${GITHUB_CLONE_URL_PREFIX}${repository}.git`;
}

function named(cloneUrl: string, repository: string): AcceptedCloneUrl | { problem: string } {
  if (!RepositoryName.safeParse(repository).success) {
    return { problem: `cloneUrl does not name a repository: "${repository}" is not "owner/name"` };
  }
  return { cloneUrl, repository };
}

function withoutGitSuffix(path: string): string {
  return path.replace(/\.git$/, '');
}

import { redactUrl } from '../../client/redact-url.js';

/**
 * Only `https://` (and `file://`, which the control plane allows for local
 * repositories) are clone URLs: anything else — `ext::…`, `-…` read as an option, an
 * ssh or git transport — is refused before git sees it. git's own `protocol.allow`
 * refuses them again.
 */
export function checkCloneUrl(url: string): string {
  if (!/^(https:\/\/[^\s]+|file:\/\/\/[^\s]*)$/.test(url) || /[\0\n\r]/.test(url)) {
    throw new Error(
      `The clone URL "${redactUrl(url)}" is refused: expected https://… (or file:///… for a local repository)`,
    );
  }
  return url;
}

/** Only a plain ref name is fetched: nothing git could read as an option, a range or a lock. */
export function checkFetchRef(ref: string): void {
  if (
    !/^refs\/[A-Za-z0-9._/-]+$/.test(ref) ||
    ref.includes('..') ||
    ref.endsWith('/') ||
    ref.endsWith('.lock')
  ) {
    throw new Error(`The fetch ref "${ref}" is refused: expected a ref name such as refs/pull/12/head`);
  }
}

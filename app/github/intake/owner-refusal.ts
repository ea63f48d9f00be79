/** A repository's owner as a webhook names it. */
export interface WebhookOwner {
  login: string;
  /** GitHub's account id (every payload GitHub sends has it). */
  id?: number | undefined;
}

/**
 * Why a delivery about a repository of `owner` is not acted on, or null when the owner is
 * allowed (`FLUKSIO_ALLOWED_OWNERS`). An owner pinned to its account id (`acme:1234567`) is
 * matched by that id, whatever its name now: renamed, it is still allowed, and another
 * account under its old name — GitHub frees a name when its account is renamed or
 * deleted — is not. An owner written by name alone is matched by name.
 */
export function ownerRefusal(
  owner: WebhookOwner,
  allowed: readonly string[],
  pinned: ReadonlyMap<string, number>,
): string | null {
  if (owner.id !== undefined && [...pinned.values()].includes(owner.id)) return null;
  const login = owner.login.toLowerCase();
  const pinnedId = pinned.get(login);
  if (pinnedId !== undefined) {
    return `the name ${login} is pinned to account ${pinnedId}, and this is account ${owner.id ?? '(none given)'}`;
  }
  return allowed.includes(login) ? null : 'the owner is not allowed';
}

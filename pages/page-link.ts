/**
 * The credential a page was opened with (`token` for the local UI, `exp` and `sig` for a
 * signed link), passed on to every request and link the page makes, so a page reached
 * through a link keeps working without a session.
 */
const CARRIED = ['token', 'exp', 'sig'] as const;

function carriedQuery(): URLSearchParams {
  const current = new URLSearchParams(location.search);
  const carried = new URLSearchParams();
  for (const name of CARRIED) {
    const value = current.get(name);
    if (value !== null) carried.set(name, value);
  }
  return carried;
}

/** `path` with the page's credential (and `extra`) in its query. */
export function pageUrl(path: string, extra: Record<string, string> = {}): string {
  const query = carriedQuery();
  for (const [name, value] of Object.entries(extra)) query.set(name, value);
  const text = query.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
}

/** GETs a page API's JSON; throws the server's sentence on an error. */
export async function fetchJson<T>(path: string): Promise<T> {
  const response = await fetch(pageUrl(path), { headers: { accept: 'application/json' } });
  if (!response.ok) {
    const body = (await response.json().catch(() => ({}))) as { error?: string };
    throw new Error(body.error ?? `${path} answered ${response.status}`);
  }
  return (await response.json()) as T;
}

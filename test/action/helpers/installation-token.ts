import { createSign } from 'node:crypto';
import type { GitHubDouble, InstallationPermissions } from '../../github/github-double.js';

/**
 * An installation token the double issued, with `permissions`: what a workflow's
 * `GITHUB_TOKEN` is (an installation token of GitHub's Actions app), minted through the
 * double's `POST /app/installations/{id}/access_tokens` with the app's JWT.
 */
export async function mintInstallationToken(
  double: GitHubDouble,
  installationId: number,
  permissions: InstallationPermissions,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${encode({ alg: 'RS256', typ: 'JWT' })}.${encode({ iat: now - 60, exp: now + 540, iss: double.credentials.appId })}`;
  const jwt = `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(double.credentials.privateKey, 'base64url')}`;
  const response = await fetch(`${double.url}/app/installations/${installationId}/access_tokens`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${jwt}`,
      accept: 'application/vnd.github+json',
      'content-type': 'application/json',
    },
    body: JSON.stringify({ permissions }),
  });
  const body = (await response.json()) as { token?: string; message?: string };
  if (!response.ok || !body.token)
    throw new Error(`The double issued no token: ${response.status} ${body.message}`);
  return body.token;
}

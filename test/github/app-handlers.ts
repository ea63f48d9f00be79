import { randomBytes } from 'node:crypto';
import type { DoubleInstallation, InstallationPermissions } from './github-double-records.js';
import { notFound, unprocessable, type HandlerContext, type OperationHandler } from './github-handler.js';
import { githubTime, renderAccount, renderRepository } from './github-shapes.js';

const TOKEN_LIFETIME_MS = 60 * 60 * 1000;
const EVENTS = ['check_run', 'check_suite', 'issue_comment', 'pull_request', 'push'];

function installationToken(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return `ghs_${[...randomBytes(36)].map((byte) => alphabet[byte % alphabet.length]).join('')}`;
}

function renderInstallation(context: HandlerContext, installation: DoubleInstallation): unknown {
  const account = renderAccount(installation.account);
  const example = context.route.example() as Record<string, unknown>;
  return {
    ...example,
    id: installation.id,
    account,
    access_tokens_url: `https://api.github.com/app/installations/${installation.id}/access_tokens`,
    html_url: `https://github.com/settings/installations/${installation.id}`,
    app_id: context.app.id,
    app_slug: context.app.slug,
    target_id: account.id,
    target_type: installation.account.type ?? 'Organization',
    permissions: installation.permissions,
    events: EVENTS,
    repository_selection: 'all',
    single_file_name: null,
    has_multiple_single_files: false,
    single_file_paths: [],
  };
}

/** The requested permissions `granted` does not cover (write includes read), as `name: level`. */
function missingPermissions(granted: InstallationPermissions, requested: InstallationPermissions): string[] {
  return Object.entries(requested)
    .filter(([name, level]) => !(granted[name] === 'write' || granted[name] === level))
    .map(([name, level]) => `${name}: ${level}`);
}

/** Issues an installation token, restricted to the repositories and permissions asked for. */
const createInstallationAccessToken: OperationHandler = (context) => {
  const installation = context.state.installations.get(Number(context.params.installation_id));
  if (!installation) return notFound();
  const owned = context.state.installationRepositories(installation.id);
  const names = (context.body.repositories as string[] | undefined) ?? [];
  const ids = (context.body.repository_ids as number[] | undefined) ?? [];
  const unknown = [
    ...names.filter(
      (name) => !owned.some((repository) => repository.name.toLowerCase() === name.toLowerCase()),
    ),
    ...ids.filter((id) => !owned.some((repository) => repository.id === id)).map(String),
  ];
  if (unknown.length > 0) {
    return unprocessable(
      `There is at least one repository that does not exist or is not accessible to the parent installation (${unknown.join(', ')})`,
    );
  }
  const requested =
    (context.body.permissions as InstallationPermissions | undefined) ?? installation.permissions;
  const refused = missingPermissions(installation.permissions, requested);
  if (refused.length > 0) {
    return unprocessable(
      `The permissions requested are not granted to this installation (${refused.join(', ')})`,
    );
  }
  const scoped =
    names.length > 0 || ids.length > 0
      ? owned.filter(
          (repository) =>
            ids.includes(repository.id) ||
            names.some((name) => name.toLowerCase() === repository.name.toLowerCase()),
        )
      : null;
  const issuedAt = new Date();
  const token = {
    id: context.state.nextId('token'),
    token: installationToken(),
    installationId: installation.id,
    repositoryIds: scoped && scoped.map((repository) => repository.id),
    // Every token can read metadata, whether asked for or not.
    permissions: { metadata: 'read' as const, ...requested },
    issuedAt,
    expiresAt: new Date(issuedAt.getTime() + TOKEN_LIFETIME_MS),
    revokedAt: null,
  };
  context.state.tokens.set(token.token, token);
  const { repositories: [repositoryExample] = [], ...example } = context.route.example() as {
    repositories?: Array<Record<string, unknown>>;
  };
  return {
    status: 201,
    body: {
      ...example,
      token: token.token,
      expires_at: githubTime(token.expiresAt),
      permissions: token.permissions,
      repository_selection: scoped ? 'selected' : 'all',
      ...(scoped &&
        repositoryExample && {
          repositories: scoped.map((repository) => renderRepository(repositoryExample, repository)),
        }),
    },
  };
};

const revokeInstallationAccessToken: OperationHandler = (context) => {
  if (context.token) context.token.revokedAt = new Date();
  return { status: 204 };
};

const getAuthenticated: OperationHandler = (context) => {
  const example = context.route.example() as Record<string, unknown>;
  return {
    status: 200,
    body: {
      ...example,
      id: context.app.id,
      slug: context.app.slug,
      name: context.app.name,
      client_id: `Iv1.${context.app.id.toString(16).padStart(16, '0')}`,
      html_url: `https://github.com/apps/${context.app.slug}`,
      permissions: {
        metadata: 'read',
        contents: 'read',
        checks: 'write',
        issues: 'write',
        pull_requests: 'write',
      },
      events: EVENTS,
    },
  };
};

const getInstallation: OperationHandler = (context) => {
  const installation = context.state.installations.get(Number(context.params.installation_id));
  return installation ? { status: 200, body: renderInstallation(context, installation) } : notFound();
};

const getRepoInstallation: OperationHandler = (context) => {
  const installation =
    context.repository && context.state.installations.get(context.repository.installationId);
  return installation ? { status: 200, body: renderInstallation(context, installation) } : notFound();
};

/** The operations authenticated as the app, and token revocation. */
export const appHandlers: Record<string, OperationHandler> = {
  'apps/create-installation-access-token': createInstallationAccessToken,
  'apps/revoke-installation-access-token': revokeInstallationAccessToken,
  'apps/get-authenticated': getAuthenticated,
  'apps/get-installation': getInstallation,
  'apps/get-repo-installation': getRepoInstallation,
};

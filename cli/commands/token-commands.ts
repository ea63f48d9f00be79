import { RepositoryName } from '../../schemas/protocol/repository-name.js';
import { hashToken } from '../../app/http/hash-token.js';
import { ApiTokenExistsError } from '../../store/tokens/api-token-exists-error.js';
import { createApiToken } from '../../store/tokens/create-api-token.js';
import { revokeApiToken } from '../../store/tokens/revoke-api-token.js';
import type { CliIo } from '../../present/terminal/cli-io.js';
import { newToken, openServerDatabase } from '../server/server-database.js';
import { UsageError } from '../../present/terminal/usage-error.js';

export interface TokenAddOptions {
  name: string;
  repo: string[];
  submit?: boolean;
  json?: boolean;
}

/**
 * `fluksio token add`: an API token for the named repositories, `read` by default or
 * `submit` with --submit; printed once, only its hash is kept.
 */
export async function tokenAddCommand(options: TokenAddOptions, io: CliIo): Promise<number> {
  const problems: string[] = [];
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(options.name))
    problems.push(`--name: "${options.name}" is not a name (letters, digits, . _ -)`);
  if (options.repo.length === 0) problems.push('--repo: give at least one repository as owner/name');
  for (const repo of options.repo)
    if (!RepositoryName.safeParse(repo).success)
      problems.push(`--repo: "${repo}" is not a repository as owner/name`);
  if (problems.length > 0) throw new UsageError(problems.join('\n'));
  const scope = options.submit ? 'submit' : 'read';
  const token = await newToken('api');
  const database = await openServerDatabase(io);
  try {
    await createApiToken({
      db: database.db,
      name: options.name,
      repositories: options.repo,
      scope,
      tokenHash: hashToken(token),
    });
  } catch (error) {
    if (error instanceof ApiTokenExistsError)
      throw new UsageError(`--name: a token named ${options.name} exists already`, { cause: error });
    throw error;
  } finally {
    await database.close();
  }
  if (options.json)
    io.stdout.write(
      `${JSON.stringify({ name: options.name, repositories: options.repo, scope, token }, null, 2)}\n`,
    );
  else
    io.stdout.write(
      `Token ${options.name} (${scope}: ${options.repo.join(', ')}), shown this once:\n\n  ${token}\n\nUse it as FLUKSIO_TOKEN.\n`,
    );
  return 0;
}

/** `fluksio token revoke NAME`. */
export async function tokenRevokeCommand(name: string, io: CliIo): Promise<number> {
  const database = await openServerDatabase(io);
  try {
    if (!(await revokeApiToken({ db: database.db, name })))
      throw new UsageError(`No active token named ${name}`);
  } finally {
    await database.close();
  }
  io.stdout.write(`Token ${name} revoked\n`);
  return 0;
}

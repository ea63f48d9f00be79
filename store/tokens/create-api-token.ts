import { sql } from 'drizzle-orm';
import { newId } from '../../core/new-id.js';
import { apiTokens, type ApiTokenRow, type ApiTokenScope } from '../../schemas/tables/api-tokens.js';
import { ApiTokenExistsError } from './api-token-exists-error.js';
import type { Database } from '../db/database.js';

/**
 * Creates a submitter's API token (`fluksio token add`) for `repositories` (at least one)
 * with `scope`, stored as the sha256 hex of the token. A name held by a live token is an
 * ApiTokenExistsError, decided by the unique index of live names; a revoked token's name
 * may be used again.
 */
export async function createApiToken({
  db,
  name,
  repositories,
  scope,
  tokenHash,
}: {
  db: Database;
  name: string;
  repositories: readonly string[];
  scope: ApiTokenScope;
  tokenHash: string;
}): Promise<ApiTokenRow> {
  if (repositories.length === 0) {
    throw new Error(`API token "${name}" must name at least one repository (--repo owner/name)`);
  }
  const [token] = await db
    .insert(apiTokens)
    .values({ id: newId(), name, repositories: [...repositories], scope, tokenHash })
    .onConflictDoNothing({ target: apiTokens.name, where: sql`revoked_at is null` })
    .returning();
  if (!token) throw new ApiTokenExistsError(name);
  return token;
}

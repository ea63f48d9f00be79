import { and, eq, isNull, sql } from 'drizzle-orm';
import { apiTokens, type ApiTokenRow } from '../../schemas/tables/api-tokens.js';
import type { Database } from '../db/database.js';
import { perHandle } from '../db/per-handle.js';

const liveTokenByHash = perHandle((db) =>
  db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.tokenHash, sql.placeholder('tokenHash')), isNull(apiTokens.revokedAt)))
    .prepare('find_api_token_by_hash'),
);

/** The live API token whose sha256 hex is `tokenHash`, or null (unknown or revoked). */
export async function findApiTokenByHash({
  db,
  tokenHash,
}: {
  db: Database;
  tokenHash: string;
}): Promise<ApiTokenRow | null> {
  const [token] = await liveTokenByHash(db).execute({ tokenHash });
  return token ?? null;
}

import { and, eq, isNull } from 'drizzle-orm';
import { apiTokens, type ApiTokenRow } from '../../schemas/tables/api-tokens.js';
import type { Database } from '../db/database.js';

/** The live API token whose sha256 hex is `tokenHash`, or null (unknown or revoked). */
export async function findApiTokenByHash({
  db,
  tokenHash,
}: {
  db: Database;
  tokenHash: string;
}): Promise<ApiTokenRow | null> {
  const [token] = await db
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.tokenHash, tokenHash), isNull(apiTokens.revokedAt)));
  return token ?? null;
}

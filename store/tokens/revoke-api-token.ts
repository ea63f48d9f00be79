import { and, eq, isNull, sql } from 'drizzle-orm';
import { apiTokens } from '../../schemas/tables/api-tokens.js';
import type { Database } from '../db/database.js';

/**
 * Revokes the live API token named `name` (`fluksio token revoke`): it stops
 * authenticating at once; the row stays, with `revoked_at`. False when no live token has
 * that name.
 */
export async function revokeApiToken({ db, name }: { db: Database; name: string }): Promise<boolean> {
  const revoked = await db
    .update(apiTokens)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiTokens.name, name), isNull(apiTokens.revokedAt)))
    .returning({ id: apiTokens.id });
  return revoked.length > 0;
}

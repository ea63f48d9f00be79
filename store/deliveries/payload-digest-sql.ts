import { sql, type SQL } from 'drizzle-orm';

/**
 * The digest a delivery's payload is recognised by (`deliveries.payload_digest`): the hex
 * sha256 of the payload as Postgres prints its `jsonb`, keys in its own order and spacing,
 * so the same signed body has the same digest however it was serialised, and a different
 * body (another comment, an edit's `updated_at`, another push) a different one. Computed by
 * the database, from the value it stores, and by migration 0022 for the rows stored before.
 */
export function payloadDigestSql(payload: Record<string, unknown>): SQL {
  return sql`encode(sha256(convert_to((${JSON.stringify(payload)}::jsonb)::text, 'UTF8')), 'hex')`;
}

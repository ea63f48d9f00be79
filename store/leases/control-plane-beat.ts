import { and, gte, lte, sql, type SQL } from 'drizzle-orm';
import { controlPlaneAvailability } from '../../schemas/tables/control-plane-availability.js';
import type { Database } from '../db/database.js';
import { milliseconds } from '../db/milliseconds.js';

/**
 * Records, by the database's clock, that the control plane is available now (one beat of
 * any replica): a beat that comes more than `outageAfterMs` after the previous one (any
 * replica's) ends an outage, and starts the current stretch of availability again. Every
 * replica beats the one row, so they agree on it whatever their own uptimes.
 */
export async function beatControlPlane({
  db,
  outageAfterMs,
}: {
  db: Database;
  outageAfterMs: number;
}): Promise<void> {
  const table = controlPlaneAvailability;
  await db
    .insert(table)
    .values({ one: true })
    .onConflictDoUpdate({
      target: table.one,
      set: {
        availableSince: sql`case when ${table.lastBeatAt} < now() - ${milliseconds(outageAfterMs)}
          then now() else ${table.availableSince} end`,
        lastBeatAt: sql`greatest(${table.lastBeatAt}, now())`,
      },
    });
}

/**
 * The condition that the control plane has been available without an outage (no gap
 * between beats longer than `outageAfterMs`, up to now) for at least `forMs`: only then
 * may a lease that ran out be blamed on its runner, whose heartbeats could reach it.
 */
export function availableFor({ forMs, outageAfterMs }: { forMs: number; outageAfterMs: number }): SQL {
  const table = controlPlaneAvailability;
  return sql`exists (select from ${table} where ${and(
    lte(table.availableSince, sql`now() - ${milliseconds(forMs)}`),
    gte(table.lastBeatAt, sql`now() - ${milliseconds(outageAfterMs)}`),
  )})`;
}

import { sql } from 'drizzle-orm';
import { boolean, check, pgTable, timestamp } from 'drizzle-orm/pg-core';

/**
 * The control plane's heartbeat of its own availability (store/leases/control-plane-beat.ts),
 * beaten by every replica's sweeper, by the database's clock: an expired lease is taken back
 * only once the control plane has been available, without an outage, for a lease's time to
 * live (DESIGN §6). A restart of one process, a replica among several or a quick crash loop
 * leaves no gap long enough to count, so it does not start the count again; an outage does,
 * so runners cut off by it get a whole lease to beat again.
 */
export const controlPlaneAvailability = pgTable(
  'control_plane_availability',
  {
    /** Always true: the table holds one row. */
    one: boolean('one').primaryKey().default(true),
    /** When the current stretch of availability began: the first beat after an outage. */
    availableSince: timestamp('available_since', { withTimezone: true }).notNull().defaultNow(),
    /** The latest beat of any replica. */
    lastBeatAt: timestamp('last_beat_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [check('control_plane_availability_one', sql`${table.one}`)],
);
export type ControlPlaneAvailabilityRow = typeof controlPlaneAvailability.$inferSelect;

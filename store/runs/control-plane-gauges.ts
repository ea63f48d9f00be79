import { eq, gt, sql } from 'drizzle-orm';
import { runners } from '../../schemas/tables/runners.js';
import { runs } from '../../schemas/tables/runs.js';
import type { Database } from '../db/database.js';
import { milliseconds } from '../db/milliseconds.js';

/** What `GET /metrics` reports about the queue, the runs and the runners. */
export interface ControlPlaneGauges {
  /** Queued runs by the label set they need (labels sorted), largest first. */
  queueDepth: { labels: string[]; count: number }[];
  runsByStatus: { status: string; count: number }[];
  /** Runners seen within the online window. */
  runnersOnline: number;
}

/**
 * The control plane's gauges, read in three small queries (the status counts use the
 * runs' status index). Label sets are compared sorted, so `[gpu, a100]` and `[a100, gpu]`
 * are one queue.
 */
export async function controlPlaneGauges({
  db,
  onlineWindowMs,
}: {
  db: Database;
  onlineWindowMs: number;
}): Promise<ControlPlaneGauges> {
  const labelSet = sql<string[]>`array(select unnest(${runs.labels}) order by 1)`;
  const [queueDepth, runsByStatus, [online]] = await Promise.all([
    db
      .select({ labels: labelSet, count: sql<number>`count(*)::int` })
      .from(runs)
      .where(eq(runs.status, 'queued'))
      .groupBy(labelSet)
      .orderBy(sql`count(*) desc`, labelSet),
    db
      .select({ status: runs.status, count: sql<number>`count(*)::int` })
      .from(runs)
      .groupBy(runs.status)
      .orderBy(runs.status),
    db
      .select({ count: sql<number>`count(*)::int` })
      .from(runners)
      .where(gt(runners.lastSeenAt, sql`now() - ${milliseconds(onlineWindowMs)}`)),
  ]);
  return { queueDepth, runsByStatus, runnersOnline: online?.count ?? 0 };
}

import { and, asc, eq, sql } from 'drizzle-orm';
import { logLines } from '../../schemas/tables/log-lines.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';

/**
 * A stage's output on a control plane (`GET /api/v1/runs/:id/logs/:stage`): the masked
 * lines of its latest attempt that printed any, in the order printed. An earlier attempt's
 * lines are not mixed in: a run queued again prints its stages anew. Empty for a stage
 * that printed nothing (yet); null when the run has no stage of that name.
 */
export async function getStageLog({
  db,
  runId,
  stage,
}: {
  db: Database;
  runId: string;
  stage: string;
}): Promise<string[] | null> {
  const ofStage = and(eq(logLines.runId, runId), eq(logLines.stage, stage));
  const latest = db
    .select({ attempt: sql`max(${logLines.attempt})` })
    .from(logLines)
    .where(ofStage);
  const rows = await db
    .select({ lines: logLines.lines })
    .from(logLines)
    .where(and(ofStage, eq(logLines.attempt, sql`(${latest})`)))
    .orderBy(asc(logLines.seq));
  if (rows.length > 0) return rows.flatMap((row) => row.lines);
  const [known] = await db
    .select({ name: stages.name })
    .from(stages)
    .where(and(eq(stages.runId, runId), eq(stages.name, stage)));
  return known ? [] : null;
}

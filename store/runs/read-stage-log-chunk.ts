import { and, asc, eq, gte, sql } from 'drizzle-orm';
import { logLines } from '../../schemas/tables/log-lines.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';

/** Rows read by one query at most: a runner's batch is one row, from one line to thousands. */
const MAX_ROWS = 64;

/**
 * A piece of a stage's output on a control plane, for the run pages' live log: the lines
 * of the rows of its latest attempt from event seq `fromSeq`, whole rows until about
 * `maxLines` lines or more (rows are not split), with the seq to continue from. Reads an index range
 * of `log_lines`, never the whole log, so a page following a long log costs what is new.
 * `atEnd` when no stored row follows; null when the run has no stage of that name.
 */
export async function readStageLogChunk({
  db,
  runId,
  stage,
  fromSeq,
  maxLines,
}: {
  db: Database;
  runId: string;
  stage: string;
  fromSeq: number;
  maxLines: number;
}): Promise<{ lines: string[]; nextSeq: number; atEnd: boolean } | null> {
  const ofStage = and(eq(logLines.runId, runId), eq(logLines.stage, stage));
  const latest = db
    .select({ attempt: sql`max(${logLines.attempt})` })
    .from(logLines)
    .where(ofStage);
  const lines: string[] = [];
  let nextSeq = fromSeq;
  // Rows are read 1, 2, 4… at a time until the piece holds `maxLines`: a row may hold one
  // line or ten thousand, and a piece must not drag the rest of a long log along.
  for (let limit = 1; ; limit = Math.min(limit * 2, MAX_ROWS)) {
    const rows = await db
      .select({ seq: logLines.seq, lines: logLines.lines })
      .from(logLines)
      .where(and(ofStage, eq(logLines.attempt, sql`(${latest})`), gte(logLines.seq, nextSeq)))
      .orderBy(asc(logLines.seq))
      .limit(limit);
    for (const row of rows) {
      lines.push(...row.lines);
      nextSeq = row.seq + 1;
    }
    if (rows.length < limit) {
      // Past the first row, the stage is known to exist.
      if (nextSeq > 0) return { lines, nextSeq, atEnd: true };
      break;
    }
    if (lines.length >= maxLines) return { lines, nextSeq, atEnd: false };
  }
  const [known] = await db
    .select({ name: stages.name })
    .from(stages)
    .where(and(eq(stages.runId, runId), eq(stages.name, stage)));
  return known ? { lines, nextSeq, atEnd: true } : null;
}

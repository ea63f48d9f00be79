import { sql } from 'drizzle-orm';
import { formatBytes } from '../../core/text/format.js';
import { logLineBytes } from '../../core/text/log-line-bytes.js';
import type { NewLogLinesRow } from '../../schemas/tables/log-lines.js';
import { stageLogSizes } from '../../schemas/tables/stage-log-sizes.js';
import type { Database } from '../db/database.js';

/**
 * The log rows of one batch of an attempt, each cut to what fits in `maxBytes` of its
 * stage's log: a line counts its UTF-8 bytes and a newline (none after a `\r`), as
 * logText writes it and a runner's log_limit counts it. The first line that does not fit
 * becomes one saying that the rest was dropped; after it a stage's lines are dropped, and
 * a row left without lines goes. Runners stop at a stage's `log_limit` themselves: this
 * bounds what an old or a hostile one can store. What every
 * row offered is added to the stage's count (stage_log_sizes) in the caller's transaction,
 * which holds the run's row locked, so the batches of a run are counted one after another.
 */
export async function keepWithinLogLimit(
  db: Database,
  {
    runId,
    attempt,
    rows,
    maxBytes,
  }: { runId: string; attempt: number; rows: readonly NewLogLinesRow[]; maxBytes: number },
): Promise<NewLogLinesRow[]> {
  const offered = new Map<string, number>();
  for (const row of rows) {
    offered.set(
      row.stage,
      (offered.get(row.stage) ?? 0) + row.lines.reduce((sum, line) => sum + logLineBytes(line), 0),
    );
  }
  // What each stage had offered before this batch.
  const counted = new Map<string, number>();
  for (const [stage, bytes] of offered) {
    const [size] = await db
      .insert(stageLogSizes)
      .values({ runId, attempt, stage, bytes })
      .onConflictDoUpdate({
        target: [stageLogSizes.runId, stageLogSizes.attempt, stageLogSizes.stage],
        set: { bytes: sql`${stageLogSizes.bytes} + ${bytes}` },
      })
      .returning({ bytes: stageLogSizes.bytes });
    counted.set(stage, (size?.bytes ?? bytes) - bytes);
  }
  const kept: NewLogLinesRow[] = [];
  for (const row of rows) {
    let total = counted.get(row.stage) ?? 0;
    if (total > maxBytes) continue;
    const lines: string[] = [];
    for (const line of row.lines) {
      const bytes = logLineBytes(line);
      if (total + bytes <= maxBytes) lines.push(line);
      else if (total <= maxBytes) {
        lines.push(
          `fluksio: this stage's log passed the ${formatBytes(maxBytes)} the control plane keeps of one stage (FLUKSIO_MAX_STAGE_LOG): the rest was dropped`,
        );
      }
      total += bytes;
    }
    counted.set(row.stage, total);
    if (lines.length > 0) kept.push({ ...row, lines });
  }
  return kept;
}

import { and, desc, eq, inArray, isNotNull, lt } from 'drizzle-orm';
import type { PreviousStage } from '../../schemas/previous-stage.js';
import { runs } from '../../schemas/tables/runs.js';
import { stages } from '../../schemas/tables/stages.js';
import type { Database } from '../db/database.js';

/**
 * The key inputs a stage had in the latest run of the same pipeline before `beforeRunId`
 * that got as far as computing them (ran, cached, or failed), among the runs of the
 * repository in the given trust domains: what a miss is compared with to say why the
 * stage re-ran (DESIGN §5, issue 8 defect 9). Run ids are ULIDs, so "before" is by time.
 */
export async function previousStageInputs({
  db,
  repository,
  pipelinePath,
  trustDomains,
  stage,
  beforeRunId,
}: {
  db: Database;
  repository: string;
  pipelinePath: string;
  trustDomains: readonly string[];
  stage: string;
  beforeRunId: string;
}): Promise<PreviousStage | null> {
  if (trustDomains.length === 0) return null;
  const [row] = await db
    .select({ runId: stages.runId, keyInputs: stages.keyInputs })
    .from(stages)
    .innerJoin(runs, eq(runs.id, stages.runId))
    .where(
      and(
        eq(runs.repository, repository),
        eq(runs.pipelinePath, pipelinePath),
        inArray(runs.trustDomain, [...trustDomains]),
        lt(runs.id, beforeRunId),
        eq(stages.name, stage),
        isNotNull(stages.keyInputs),
      ),
    )
    .orderBy(desc(runs.id))
    .limit(1);
  return row?.keyInputs ? { runId: row.runId, keyInputs: row.keyInputs } : null;
}

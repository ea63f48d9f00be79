import { newId } from '../../core/new-id.js';
import { runners, type RunnerRow } from '../../schemas/tables/runners.js';
import type { Database } from '../db/database.js';
import { RunnerExistsError } from './runner-exists-error.js';

/**
 * Registers a runner (`fluksio runner add`): bound to `owner`, to `repositories` of that
 * owner (empty: all of them) and to `labels`, authenticated by the token whose sha256 hex
 * is `tokenHash` (the token itself is shown once and never stored). A name taken already is
 * a RunnerExistsError, decided by the unique index, so two concurrent adds make one runner.
 */
export async function createRunner({
  db,
  name,
  owner,
  repositories,
  labels,
  tokenHash,
}: {
  db: Database;
  name: string;
  owner: string;
  repositories: readonly string[];
  labels: readonly string[];
  tokenHash: string;
}): Promise<RunnerRow> {
  const [runner] = await db
    .insert(runners)
    .values({ id: newId(), name, owner, repositories: [...repositories], labels: [...labels], tokenHash })
    .onConflictDoNothing({ target: runners.name })
    .returning();
  if (!runner) throw new RunnerExistsError(name);
  return runner;
}

import { asc, desc, eq, or, sql } from 'drizzle-orm';
import { runs, type Run } from '../../schemas/tables/runs.js';
import { AmbiguousRunPrefixError } from './ambiguous-run-prefix-error.js';
import type { Database } from '../db/database.js';
import { escapeLike } from '../db/escape-like.js';

/** How many candidates an ambiguous prefix lists. */
const CANDIDATES_SHOWN = 10;

/**
 * The run named by an exact id or by a prefix of exactly one run's id, as `fluksio show
 * 01jd4` accepts; a prefix's case does not matter (ULIDs are upper case, people type
 * lower). Null when nothing matches; AmbiguousRunPrefixError listing candidates when
 * several do.
 */
export async function findRun({ db, idOrPrefix }: { db: Database; idOrPrefix: string }): Promise<Run | null> {
  if (idOrPrefix === '') return null;
  const pattern = `${escapeLike(idOrPrefix.toUpperCase())}%`;
  const found = await db
    .select()
    .from(runs)
    .where(or(eq(runs.id, idOrPrefix), sql`upper(${runs.id}) like ${pattern}`))
    .orderBy(desc(sql`${runs.id} = ${idOrPrefix}`), asc(runs.id))
    .limit(CANDIDATES_SHOWN + 1);
  const [first] = found;
  if (!first || first.id === idOrPrefix || found.length === 1) return first ?? null;
  throw new AmbiguousRunPrefixError(
    idOrPrefix,
    found.slice(0, CANDIDATES_SHOWN).map((run) => run.id),
    found.length > CANDIDATES_SHOWN,
  );
}

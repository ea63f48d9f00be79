import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { runners, type RunnerRow } from '../../schemas/tables/runners.js';
import type { Database } from '../db/database.js';
import { perHandle } from '../db/per-handle.js';

/**
 * How stale `last_seen_at` may read before a request writes it again: a fortieth of the
 * online window, at most a second — the window's edge moves by that much at most.
 */
function seenGranularityMs(onlineWindowMs: number): number {
  return Math.min(1000, Math.floor(onlineWindowMs / 40));
}
const SEEN_GRANULARITY = sql`(${sql.placeholder('granularityMs')}::double precision * interval '1 millisecond')`;
const VERSION = sql`${sql.placeholder('version')}::text`;

const runnerByTokenHash = perHandle((db) =>
  db
    .select({
      runner: runners,
      stale: sql<boolean>`(${runners.lastSeenAt} is null or ${runners.lastSeenAt} < now() - ${SEEN_GRANULARITY}
        or (${VERSION} is not null and ${runners.version} is distinct from ${VERSION}))`,
    })
    .from(runners)
    .where(eq(runners.tokenHash, sql.placeholder('tokenHash')))
    .prepare('find_runner_by_token_hash'),
);

const markSeen = perHandle((db) =>
  db
    .update(runners)
    .set({ lastSeenAt: sql`now()`, version: sql`coalesce(${VERSION}, ${runners.version})` })
    .where(
      and(
        eq(runners.id, sql.placeholder('id')),
        or(
          isNull(runners.lastSeenAt),
          lt(runners.lastSeenAt, sql`now() - ${SEEN_GRANULARITY}`),
          sql`(${VERSION} is not null and ${runners.version} is distinct from ${VERSION})`,
        ),
      ),
    )
    .returning()
    .prepare('mark_runner_seen'),
);

/**
 * The runner a request's bearer token (as sha256 hex) belongs to, or null. Seeing it is
 * also what keeps it online: `last_seen_at` is set to the database's `now()`, for the
 * online gauge and for the reasons queued runs give — written when it reads older than a
 * fortieth of the online window (at most a second), so a busy runner's claims, heartbeats and events do not each cost a commit.
 * The same write keeps `version`, the last fluksio version a request named, written at
 * once when it changes: a runner restarted on a new version says so at its first
 * request. A request naming none (curl with the runner's token) leaves it as it was, so
 * two such clients taking turns do not make every request a write.
 */
export async function findRunnerByTokenHash({
  db,
  tokenHash,
  onlineWindowMs = 120_000,
  version = null,
}: {
  db: Database;
  tokenHash: string;
  /** The online window (`FLUKSIO_ONLINE_WINDOW`), which sets how often it is written. */
  onlineWindowMs?: number;
  /** The fluksio version the request's `User-Agent` names, or null when it names none. */
  version?: string | null;
}): Promise<RunnerRow | null> {
  const granularityMs = seenGranularityMs(onlineWindowMs);
  const [found] = await runnerByTokenHash(db).execute({ tokenHash, granularityMs, version });
  if (!found) return null;
  if (!found.stale) return found.runner;
  const [seen] = await markSeen(db).execute({ id: found.runner.id, granularityMs, version });
  if (seen) return seen;
  // Seen by another request meanwhile, or removed (or its token changed) since it was read:
  // read again rather than let a removed runner through.
  const [again] = await runnerByTokenHash(db).execute({ tokenHash, granularityMs, version });
  return again?.runner ?? null;
}
